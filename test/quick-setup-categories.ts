// The 20 quick-setup categories, spelled out from the spec (not imported from the code
// under test), sorted.
export const QUICK_SETUP_CATEGORIES = [
  'addictive_design_control',
  'age_gate',
  'algo_feed_control',
  'content_rating',
  'data_deletion_request',
  'dm_restriction',
  'geolocation_opt_in',
  'monitoring_activity',
  'notification_curfew',
  'privacy_account_creation',
  'privacy_profile_visibility',
  'purchase_approval',
  'purchase_block_iap',
  'social_chat_control',
  'targeted_ad_block',
  'time_daily_limit',
  'time_scheduled_hours',
  'usage_timer_notification',
  'web_filter_level',
  'web_safesearch',
];
