// A child's policy: who the child is and where they stand in the age bands (a picture), the
// policy's version, and its rules as a table, one row per category with its origin (`age`:
// kept following the age; `custom`: set by a person or a key). Edit opens the rule as a form
// drawn from its category's config schema (config-form.tsx); Save PUTs the rule, after which
// the rule is `custom` and the policy's version has risen. The sandbox's demo family is shown
// read-only.
import type { Haven, Item, Result } from '@haven/sdk';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { AgeTimeline, groupLabel } from './age-timeline.js';
import { cleanConfig, type JsonSchema, ObjectFields, summarise } from './config-form.js';
import { isDemoFamily } from './families.js';
import { href } from './router.js';
import { Empty, ErrorText, HeaderRow, type OnSignedOut, Section, useAction } from './ui.js';

type Child = Result<'getChild'>;
type Family = Result<'getFamily'>;
type Policy = Item<'listPolicies'>;
type Rule = Item<'listPolicyRules'>;
type Category = Item<'listRuleCategories'>;

/** The registry is the same for everyone and every page: read once per console. */
let registry: Promise<Map<string, Category>> | null = null;
function categoriesOf(haven: Haven): Promise<Map<string, Category>> {
  if (!registry) {
    registry = haven.rules
      .listCategories()
      .then((list) => new Map(list.map((category) => [category.category, category])));
    registry.catch(() => {
      registry = null;
    });
  }
  return registry;
}

/**
 * The policy this page shows: the one in force (the active policy of the highest priority,
 * the most recently changed on a tie, as devices and enforcement read it), else the newest.
 */
function policyInForce(policies: Policy[]): Policy | undefined {
  const active = policies
    .filter((policy) => policy.status === 'active')
    .sort((a, b) => b.priority - a.priority || b.updated_at.localeCompare(a.updated_at));
  return active[0] ?? policies[0];
}

interface PageData {
  child: Child;
  family: Family;
  policies: Policy[];
  categories: Map<string, Category>;
  /** Now on the family's clock (ms). */
  today: number;
}

export function PolicyPage(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  familyId: string;
  childId: string;
}) {
  const { haven, onSignedOut, familyId, childId } = props;
  const [data, setData] = useState<PageData | null>(null);
  const [policyId, setPolicyId] = useState<string | null>(null);
  const { error, run } = useAction(onSignedOut);
  useEffect(() => {
    setData(null);
    setPolicyId(null);
    void run(async () => {
      const [child, family, policies, categories] = await Promise.all([
        haven.children.get(childId),
        haven.families.get(familyId),
        haven.policies.list(childId),
        categoriesOf(haven),
      ]);
      // Today on the family's clock: a sandbox family may live by a test clock.
      const today = family.test_clock_id
        ? await haven.testClocks.get(family.test_clock_id).then(
            (clock) => Date.parse(clock.frozen_time),
            () => Date.now(),
          )
        : Date.now();
      setData({ child, family, policies, categories, today });
      setPolicyId(policyInForce(policies)?.id ?? null);
    });
  }, [haven, familyId, childId]);

  const back = (
    <p>
      <a href={href({ view: 'family', familyId })}>← {data ? data.family.name : 'The family'}</a>
    </p>
  );
  if (!data) {
    return (
      <Section title="Policy" id="policy">
        {back}
        {error ? <ErrorText error={error} /> : <p class="loading">Loading the policy…</p>}
      </Section>
    );
  }
  const { child, policies } = data;
  if (child.family_id !== familyId) {
    return (
      <Section title="Policy" id="policy">
        {back}
        <ErrorText error="This child is not in this family." />
      </Section>
    );
  }
  const policy = policies.find((candidate) => candidate.id === policyId);
  return (
    <Section title="Policy" id="policy">
      {back}
      <p class="policy-child">
        <strong>{child.name}</strong>, age {child.age} ({groupLabel(child.age_group)})
        {child.effective_age !== child.age && <>, protected as age {child.effective_age}</>}
      </p>
      <AgeTimeline child={child} today={data.today} id="age-timeline" />
      {policies.length > 1 && (
        <div class="inline">
          <label for="policy-choice">Policy</label>
          <select
            id="policy-choice"
            value={policyId ?? ''}
            onChange={(event) => setPolicyId((event.target as HTMLSelectElement).value)}
          >
            {policies.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {`${candidate.name} (${candidate.status}, version ${candidate.version})`}
              </option>
            ))}
          </select>
        </div>
      )}
      {policy ? (
        <PolicyRules
          key={policy.id}
          haven={haven}
          onSignedOut={onSignedOut}
          policy={policy}
          categories={data.categories}
          readOnly={isDemoFamily(familyId)}
          onPolicy={(changed) =>
            setData({
              ...data,
              policies: policies.map((candidate) =>
                candidate.id === changed.id ? changed : candidate,
              ),
            })
          }
        />
      ) : (
        <Empty>{child.name} has no policy yet: a quick setup or the API makes one.</Empty>
      )}
    </Section>
  );
}

function PolicyRules(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  policy: Policy;
  categories: Map<string, Category>;
  readOnly: boolean;
  onPolicy: (policy: Policy) => void;
}) {
  const { haven, onSignedOut, policy, categories } = props;
  const [rules, setRules] = useState<Rule[] | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  /** The row whose Edit button gets the focus back once its form closes. */
  const [returnTo, setReturnTo] = useState<string | null>(null);
  const { error, run } = useAction(onSignedOut);
  useEffect(() => void run(async () => setRules(await haven.policies.listRules(policy.id))), []);
  useEffect(() => {
    if (returnTo && editing === null) {
      document.getElementById(editButtonId(returnTo))?.focus();
      setReturnTo(null);
    }
  }, [returnTo, editing]);

  const close = (category: string) => {
    setEditing(null);
    setReturnTo(category);
  };
  const onSaved = (rule: Rule, changed: Policy) => {
    setRules((current) =>
      (current ?? []).map((candidate) => (candidate.category === rule.category ? rule : candidate)),
    );
    props.onPolicy(changed);
    const name = categories.get(rule.category)?.name ?? rule.category;
    setSaved(`Saved ${name}: the policy is now version ${changed.version}.`);
    close(rule.category);
  };

  return (
    <>
      <dl class="policy-facts">
        <div>
          <dt>Name</dt>
          <dd>{policy.name}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            {policy.status}
            {policy.paused_reason === 'came_of_age' && ' (the child came of age)'}
          </dd>
        </div>
        <div>
          <dt>Version</dt>
          <dd class="policy-version">{policy.version}</dd>
        </div>
        <div>
          <dt>Strictness</dt>
          <dd>{policy.strictness ?? '—'}</dd>
        </div>
      </dl>
      {props.readOnly && (
        <p class="notice">The sandbox's demo family is read-only: its rules cannot be edited.</p>
      )}
      <p class="policy-saved" role="status">
        {saved}
      </p>
      <ErrorText error={error} />
      {rules === null ? (
        !error && <p class="loading">Loading the rules…</p>
      ) : rules.length === 0 ? (
        <Empty>This policy has no rules yet.</Empty>
      ) : (
        <div class="scroll">
          <table class="rules">
            <caption class="visually-hidden">{`Rules of ${policy.name}`}</caption>
            <HeaderRow columns={['Category', 'Origin', 'Enabled', 'Config']} />
            <tbody>
              {rules.map((rule) => {
                const category = categories.get(rule.category);
                return (
                  <RuleRow
                    key={rule.category}
                    rule={rule}
                    category={category}
                    readOnly={props.readOnly}
                    editing={editing === rule.category}
                    onEdit={() => {
                      setSaved(null);
                      setEditing(rule.category);
                    }}
                    form={
                      editing === rule.category && (
                        <RuleForm
                          haven={haven}
                          onSignedOut={onSignedOut}
                          policy={policy}
                          rule={rule}
                          category={category}
                          onCancel={() => close(rule.category)}
                          onSaved={onSaved}
                        />
                      )
                    }
                  />
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

const editButtonId = (category: string) => `edit-rule-${category}`;
const nameId = (category: string) => `rule-name-${category}`;

function RuleRow(props: {
  rule: Rule;
  category: Category | undefined;
  readOnly: boolean;
  editing: boolean;
  onEdit: () => void;
  form: ComponentChildren;
}) {
  const { rule, category } = props;
  const schema = category?.config_schema as JsonSchema | undefined;
  return (
    <>
      <tr class={props.editing ? 'rule-editing' : undefined}>
        <td class="rule-category">
          <span class="rule-name" id={nameId(rule.category)}>
            {category?.name ?? rule.category}
          </span>{' '}
          <code>{rule.category}</code>
          {category?.description && <span class="rule-description">{category.description}</span>}
        </td>
        <td class="rule-origin">
          <span class={`origin origin-${rule.origin}`}>{rule.origin}</span>
        </td>
        <td class="rule-enabled">{rule.enabled ? 'on' : 'off'}</td>
        <td class="rule-config">
          <ul>
            {summarise(rule.config, schema).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        </td>
        <td class="actions">
          {!props.readOnly && (
            <button
              type="button"
              id={editButtonId(rule.category)}
              aria-describedby={nameId(rule.category)}
              aria-expanded={props.editing}
              onClick={props.onEdit}
            >
              Edit
            </button>
          )}
        </td>
      </tr>
      {props.editing && (
        <tr class="rule-form-row">
          <td colSpan={5}>{props.form}</td>
        </tr>
      )}
    </>
  );
}

function RuleForm(props: {
  haven: Haven;
  onSignedOut: OnSignedOut;
  policy: Policy;
  rule: Rule;
  category: Category | undefined;
  onCancel: () => void;
  onSaved: (rule: Rule, policy: Policy) => void;
}) {
  const { haven, policy, rule, category } = props;
  const [enabled, setEnabled] = useState(rule.enabled);
  const [config, setConfig] = useState<unknown>(rule.config);
  const { busy, error, run } = useAction(props.onSignedOut);
  const schema = (category?.config_schema ?? { type: 'object' }) as JsonSchema;
  const prefix = `rule-${rule.category}`;
  const title = `Edit ${category?.name ?? rule.category}`;
  useEffect(() => {
    // Straight to the form's first control, as a dialog would.
    document.querySelector<HTMLElement>(`#${prefix}-form input, #${prefix}-form select`)?.focus();
  }, []);
  const save = () =>
    run(async () => {
      const written = await haven.policies.putRule(policy.id, rule.category, {
        enabled,
        config: cleanConfig(schema, config) as Record<string, unknown>,
      });
      // The version is the policy's: read it back after the change.
      props.onSaved(written, await haven.policies.get(policy.id));
    });
  return (
    <form
      id={`${prefix}-form`}
      class="rule-form"
      aria-labelledby={`${prefix}-title`}
      // The API judges the values (its message is shown); the browser's checks would hide it.
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          props.onCancel();
        }
      }}
    >
      <h3 id={`${prefix}-title`}>{title}</h3>
      <div class="field field-check">
        <input
          type="checkbox"
          id={`${prefix}-enabled`}
          checked={enabled}
          onChange={(event) => setEnabled((event.target as HTMLInputElement).checked)}
        />
        <label for={`${prefix}-enabled`}>Rule enabled</label>
      </div>
      {schema.type === 'object' ? (
        <ObjectFields id={`${prefix}-config`} schema={schema} value={config} onChange={setConfig} />
      ) : (
        <p class="muted">This category's config cannot be edited here.</p>
      )}
      <ErrorText error={error} />
      <div class="inline">
        <button type="submit" class="primary" disabled={busy}>
          Save
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
