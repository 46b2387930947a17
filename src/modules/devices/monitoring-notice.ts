// CONTRACT.md §11.5: the compiled device policy tells the agent whether the child is watched,
// so it can show the child that it is monitored. Computed once per compiled body (never per
// poll); it derives from the rules alone, so the policy's version already covers it.
//
// Which categories watch the child (/tmp/decisions/monitoring-notice.md): every category of
// the `monitoring` group, and the few elsewhere through which a parent sees what the child
// does or where the child is. Each has the config that switches its watching off; an enabled
// rule with that config watches no one.

/** Whether an enabled rule with this config watches the child (false: its off switch). */
type Watching = (config: Record<string, unknown>) => boolean;

const always: Watching = () => true;
const nonEmpty =
  (key: string): Watching =>
  (config) =>
    !Array.isArray(config[key]) || config[key].length > 0;
const notEqual =
  (key: string, off: unknown): Watching =>
  (config) =>
    config[key] !== off;

/** Category → whether an enabled rule of it watches the child, given its config. */
export const MONITORING_CATEGORIES: ReadonlyMap<string, Watching> = new Map(
  Object.entries({
    // The monitoring group (DOMAIN.md: monitoring_activity, monitoring_alerts, and Haven's own).
    monitoring_activity: notEqual('enabled', false),
    monitoring_alerts: nonEmpty('events'),
    monitoring_search_history: notEqual('enabled', false),
    monitoring_keyword_alerts: nonEmpty('categories'),
    monitoring_geofence_alerts: nonEmpty('places'),
    // DOMAIN.md: the activity_monitoring capability enforces monitoring_* and screen_time_report.
    screen_time_report: always,
    // The parent reads the child's AI chats (topics or full text).
    ai_conversation_review: notEqual('parent_access', 'none'),
    // The child's AI chats are watched for self-harm, and the parent told.
    ai_self_harm_protocol: notEqual('notify_parent', false),
    // Parents (family, friends) can see where the child is: location tracking.
    privacy_location: notEqual('share_with', 'none'),
  }),
);

export interface MonitoringNotice {
  required: boolean;
  categories: string[];
}

/** The notice for the rules a device is sent (enabled ones only), categories sorted. */
export function monitoringNotice(
  rules: ReadonlyArray<{ category: string; config: Record<string, unknown> }>,
): MonitoringNotice {
  const categories = new Set<string>();
  for (const rule of rules) {
    if (MONITORING_CATEGORIES.get(rule.category)?.(rule.config)) {
      categories.add(rule.category);
    }
  }
  const sorted = [...categories].sort();
  return { required: sorted.length > 0, categories: sorted };
}
