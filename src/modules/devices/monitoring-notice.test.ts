// CONTRACT.md §11.5: which rule categories watch the child (/tmp/decisions/monitoring-notice.md
// has the reasons). Guards the list against the registry: every category of the `monitoring`
// group is on it, every name on it exists, and each one watches in its default config (but
// place alerts, which start with no places).
import { describe, expect, it } from 'vitest';
import { RULE_REGISTRY } from '../rules/registry.js';
import { MONITORING_CATEGORIES, monitoringNotice } from './monitoring-notice.js';

describe('monitoring notice categories', () => {
  it('covers the monitoring group and names only registry categories', () => {
    const known = new Set(RULE_REGISTRY.map((rule) => rule.category));
    for (const category of MONITORING_CATEGORIES.keys()) {
      expect(known.has(category), category).toBe(true);
    }
    const group = RULE_REGISTRY.filter((rule) => rule.group === 'monitoring');
    expect(group.length).toBeGreaterThanOrEqual(2);
    for (const rule of group) {
      expect(MONITORING_CATEGORIES.has(rule.category), rule.category).toBe(true);
    }
    // Engagement categories never reach a device, so none may be on the list.
    for (const rule of RULE_REGISTRY.filter((entry) => entry.engagement)) {
      expect(MONITORING_CATEGORIES.has(rule.category), rule.category).toBe(false);
    }
  });

  it('counts the listed categories that watch in their config, sorted, each once', () => {
    const rules = RULE_REGISTRY.map((rule) => ({
      category: rule.category,
      config: rule.default_config,
    })).reverse();
    const notice = monitoringNotice(rules);
    expect(notice.required).toBe(true);
    // Place alerts start with no places: nothing to watch until the parent adds one.
    const watching = [...MONITORING_CATEGORIES.keys()].filter(
      (category) => category !== 'monitoring_geofence_alerts',
    );
    expect(notice.categories).toEqual(watching.sort());
    const place = { name: 'School', latitude: 51.5, longitude: -0.1, radius_meters: 200 };
    expect(
      monitoringNotice([
        { category: 'monitoring_geofence_alerts', config: { places: [place], notify_on: 'both' } },
      ]),
    ).toEqual({ required: true, categories: ['monitoring_geofence_alerts'] });
    expect(monitoringNotice([...rules, ...rules])).toEqual(notice);
    // Categories that do not watch the child, or unknown names, never count.
    expect(
      monitoringNotice([
        { category: 'geolocation_opt_in', config: { geolocation_allowed: true } },
        { category: 'ca_aadc_tracking_signal', config: { signal_monitoring: true } },
        { category: 'constructor', config: {} },
      ]),
    ).toEqual({ required: false, categories: [] });
  });
});
