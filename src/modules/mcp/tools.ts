// The MCP tools (CONTRACT.md §10.1): one row per tool, each one REST operation of
// /openapi.json. Input and output schemas are derived from that operation (tool-schemas.ts),
// so a new tool is one row here and a renamed field cannot drift. Descriptions are written
// for a model: what the tool does, what it changes, what it needs.

export interface ToolRow {
  name: string;
  /** The REST operation (its operationId under /api/v1) the tool runs through. */
  operationId: string;
  title: string;
  description: string;
}

export const TOOLS: readonly ToolRow[] = [
  {
    name: 'get_family',
    operationId: 'getFamily',
    title: 'Get the family',
    description:
      "Reads the family this token is bound to: its name, owner and timestamps. Changes nothing. family_id defaults to the token's family.",
  },
  {
    name: 'list_children',
    operationId: 'listChildren',
    title: 'List the children',
    description:
      "Lists the children of the family with their ids, names, birth dates and age groups. Changes nothing. family_id defaults to the token's family.",
  },
  {
    name: 'get_child',
    operationId: 'getChild',
    title: 'Get a child',
    description:
      'Reads one child by child_id (from list_children): name, birth date, age, age_group, effective_age (the age the rules are derived for, lowered by age signals), age_conflict (an age signal disagrees with the birth date) and next_age_change_on. Changes nothing.',
  },
  {
    name: 'create_child',
    operationId: 'createChild',
    title: 'Add a child',
    description:
      "Adds a child to the family: name and birth_date (YYYY-MM-DD) are required. Creates no policy: use generate_policy_from_age or quick_setup_child for protection. family_id defaults to the token's family.",
  },
  {
    name: 'record_age_signal',
    operationId: 'recordAgeSignal',
    title: "Record a child's age signal",
    description:
      'Records an age range a platform or verifier reported for a child (child_id): source (apple_declared_age_range, google_play_age_signals, amazon_appstore, windows_age_signals, age_verification or parent_declared), age_lower and/or age_upper, optionally method and observed_at. The latest signal of each source counts: an upper bound below the birth-date age lowers the age the child is protected for and re-derives the age rules at once.',
  },
  {
    name: 'list_age_signals',
    operationId: 'listAgeSignals',
    title: "List a child's age signals",
    description:
      'The age ranges platforms and verifiers reported for a child (child_id), newest first: read it to explain effective_age or age_conflict. Changes nothing.',
  },
  {
    name: 'update_child',
    operationId: 'updateChild',
    title: 'Update a child',
    description:
      "Changes a child's name or birth date (child_id required). Rules already set are not regenerated.",
  },
  {
    name: 'delete_child',
    operationId: 'deleteChild',
    title: 'Delete a child',
    description:
      'Deletes a child and everything of theirs: policies, rules, devices, viewing history. Cannot be undone; ask the parent first.',
  },
  {
    name: 'list_policies',
    operationId: 'listPolicies',
    title: "List a child's policies",
    description:
      'Lists the policies of a child (child_id), with their status (active, paused, draft) and version. Changes nothing.',
  },
  {
    name: 'get_policy',
    operationId: 'getPolicy',
    title: 'Get a policy',
    description: 'Reads one policy (policy_id): its name, status and version. Changes nothing.',
  },
  {
    name: 'activate_policy',
    operationId: 'activatePolicy',
    title: 'Activate a policy',
    description:
      "Makes a policy the child's active one (pausing any other) and pushes it to the family's connected platforms.",
  },
  {
    name: 'pause_policy',
    operationId: 'pausePolicy',
    title: 'Pause a policy',
    description:
      'Pauses a policy: its rules stop being enforced until it is activated again. Nothing is deleted.',
  },
  {
    name: 'generate_policy_from_age',
    operationId: 'generatePolicyRulesFromAge',
    title: 'Generate rules from the age',
    description:
      "Writes the 20 age-appropriate rules into a policy (policy_id) from the child's age; strictness (relaxed, recommended, strict) tunes them. Replaces those rules' configs.",
  },
  {
    name: 'set_rule',
    operationId: 'putPolicyRule',
    title: 'Set a rule',
    description:
      "Creates or replaces one rule of a policy: policy_id, category (from list_rule_categories), enabled, and config (must satisfy the category's config_schema). An active policy is re-enforced.",
  },
  {
    name: 'list_rules',
    operationId: 'listPolicyRules',
    title: "List a policy's rules",
    description:
      'Every rule of a policy (policy_id): category, enabled, and config. Read it to explain or change what is blocked. Changes nothing.',
  },
  {
    name: 'delete_rule',
    operationId: 'deletePolicyRule',
    title: 'Delete a rule',
    description:
      'Removes one rule (policy_id, category) from a policy; platforms stop enforcing it at the next enforcement.',
  },
  {
    name: 'list_rule_categories',
    operationId: 'listRuleCategories',
    title: 'List the rule categories',
    description:
      'The 123 rule categories with their config_schema and default_config: read it before set_rule. Changes nothing.',
  },
  {
    name: 'get_ratings_for_age',
    operationId: 'getRatingsByAge',
    title: 'Ratings for an age',
    description:
      'The highest content rating in each system (MPAA, TV, ESRB, PEGI, Common Sense) suitable at an age (0-99). Changes nothing.',
  },
  {
    name: 'list_platforms',
    operationId: 'listPlatforms',
    title: 'List the platforms',
    description:
      'The 22 platforms rules can be enforced on, with what each can enforce and how it is connected. Changes nothing.',
  },
  {
    name: 'list_connections',
    operationId: 'listConnections',
    title: "List the family's connections",
    description:
      "The platforms the family has connected and how their last enforcement went. Credentials are never shown. family_id defaults to the token's family.",
  },
  {
    name: 'connect_platform',
    operationId: 'createConnection',
    title: 'Connect a platform',
    description:
      "Connects the family to a platform (platform_id from list_platforms), with its credentials when it needs some (stored sealed). family_id defaults to the token's family.",
  },
  {
    name: 'disconnect_platform',
    operationId: 'deleteConnection',
    title: 'Disconnect a platform',
    description:
      'Removes a connection (connection_id) and its stored credentials; rules are no longer pushed there.',
  },
  {
    name: 'enforce_policy',
    operationId: 'enforcePolicy',
    title: 'Enforce the policy',
    description:
      "Queues a job that pushes the child's active policy (child_id) to the family's connected platforms; returns the job (poll it with get_enforcement_job).",
  },
  {
    name: 'get_enforcement_job',
    operationId: 'getEnforcementJob',
    title: 'Get an enforcement job',
    description:
      'Reads an enforcement job (job_id): pending, running, completed, partial or failed, with a result per platform. Changes nothing.',
  },
  {
    name: 'list_enforcement_jobs',
    operationId: 'listChildEnforcementJobs',
    title: "List a child's enforcement jobs",
    description: 'The enforcement jobs of a child (child_id), newest first. Changes nothing.',
  },
  {
    name: 'list_devices',
    operationId: 'listDevices',
    title: "List a child's devices",
    description:
      'The devices registered for a child (child_id), with when each last checked in. Device keys are never shown.',
  },
  {
    name: 'get_viewing_history',
    operationId: 'listViewingHistory',
    title: 'Viewing history',
    description:
      "What a child (child_id) watched or played, as their devices reported it, newest first, with each title's rating. Changes nothing.",
  },
  {
    name: 'get_audit_log',
    operationId: 'listFamilyAuditLog',
    title: "Read the family's audit log",
    description:
      "Who changed what in the family, newest first: each entry's actor (user, api_key, mcp_token, device or system), action (e.g. policy.rule_updated), target and changes (settings with their new values, personal data only as field names), hash-linked so anyone can recompute the chain. limit (default 50, max 200) and before (the previous page's next_before) page through it. Changes nothing. family_id defaults to the token's family.",
  },
  {
    name: 'quick_setup_child',
    operationId: 'quickSetup',
    title: 'Set up a new child',
    description:
      "Adds a child (child_name, birth_date YYYY-MM-DD) to the token's family with an active policy of the 20 age-appropriate rules, in one step. Use this for a new child.",
  },
];
