// The 22 enforcement targets (DOMAIN.md "Platforms"). `tier` says how real the adapter is:
// `compliant` only while a live adapter exists (CONTRACT.md §10.4; partners/live-partners.ts,
// checked by platforms.test.ts); capabilities are what the platform's own controls enforce.

export const CAPABILITIES = [
  'content_rating',
  'time_limit',
  'scheduled_hours',
  'purchase_control',
  'web_filtering',
  'safe_search',
  'app_control',
  'social_control',
  'location_tracking',
  'activity_monitoring',
  'custom_blocklist',
  'custom_allowlist',
  'privacy_control',
  'algorithmic_safety',
  'notification_control',
  'ad_data_control',
  'age_verification',
  'compliance_reporting',
] as const;

export type Capability = (typeof CAPABILITIES)[number];
export type PlatformCategory = 'device' | 'dns' | 'gaming' | 'streaming';
export type PlatformTier = 'compliant' | 'provisional' | 'pending';
export type AuthType = 'api_key' | 'oauth2' | 'manual';

export interface Platform {
  platform_id: string;
  id: string;
  name: string;
  category: PlatformCategory;
  tier: PlatformTier;
  auth_type: AuthType;
  capabilities: Capability[];
  description: string;
}

const DEVICE: Capability[] = [
  'time_limit',
  'scheduled_hours',
  'app_control',
  'content_rating',
  'activity_monitoring',
];
const DNS: Capability[] = ['web_filtering', 'safe_search', 'custom_blocklist', 'custom_allowlist'];
const GAMING: Capability[] = ['content_rating', 'time_limit', 'purchase_control', 'social_control'];
const STREAMING: Capability[] = ['content_rating'];

function platform(
  id: string,
  name: string,
  category: PlatformCategory,
  tier: PlatformTier,
  authType: AuthType,
  capabilities: Capability[],
  description: string,
): Platform {
  return {
    platform_id: id,
    id,
    name,
    category,
    tier,
    auth_type: authType,
    capabilities,
    description,
  };
}

export const PLATFORMS: readonly Platform[] = [
  platform(
    'android',
    'Android (Google Family Link)',
    'device',
    'provisional',
    'oauth2',
    [...DEVICE, 'location_tracking', 'purchase_control'],
    'Screen time, app approvals, ratings and location on Android phones and tablets through Family Link.',
  ),
  platform(
    'apple',
    'Apple Screen Time',
    'device',
    'provisional',
    'manual',
    [
      ...DEVICE,
      'purchase_control',
      'notification_control',
      'privacy_control',
      'social_control',
      'safe_search',
      'custom_blocklist',
      'custom_allowlist',
    ],
    'Downtime, app limits, content and privacy restrictions on iPhone, iPad and Mac.',
  ),
  platform(
    'microsoft',
    'Microsoft Family Safety',
    'device',
    'provisional',
    'oauth2',
    [...DEVICE, 'purchase_control', 'web_filtering'],
    'Screen time, app and game limits, web filtering and spending on Windows and Xbox.',
  ),
  platform(
    'fire_tablet',
    'Amazon Fire Tablet',
    'device',
    'pending',
    'manual',
    DEVICE,
    'Amazon Kids parental controls on Fire tablets.',
  ),
  platform(
    'apple_watch',
    'Apple Watch',
    'device',
    'pending',
    'manual',
    ['time_limit', 'scheduled_hours', 'app_control', 'activity_monitoring'],
    'Family Setup and Schooltime on a child’s Apple Watch.',
  ),
  platform(
    'fire_tv',
    'Amazon Fire TV',
    'device',
    'pending',
    'manual',
    ['content_rating', 'time_limit', 'app_control'],
    'Viewing restrictions and PIN protection on Fire TV.',
  ),
  platform(
    'nextdns',
    'NextDNS',
    'dns',
    'compliant',
    'api_key',
    DNS,
    'DNS filtering profile: categories, SafeSearch, block and allow lists.',
  ),
  platform(
    'cleanbrowsing',
    'CleanBrowsing',
    'dns',
    // No public API documentation to build a live adapter from (docs/decisions.md).
    'provisional',
    'api_key',
    DNS,
    'Family DNS filter with SafeSearch enforcement and custom lists.',
  ),
  platform(
    'controld',
    'Control D',
    'dns',
    'compliant',
    'api_key',
    [...DNS, 'app_control', 'social_control', 'privacy_control', 'activity_monitoring'],
    'DNS filtering with service-level blocking (apps, social networks) and analytics.',
  ),
  platform(
    'xbox',
    'Xbox',
    'gaming',
    'pending',
    'manual',
    GAMING,
    'Xbox family settings: game ratings, screen time, purchases and multiplayer.',
  ),
  platform(
    'playstation',
    'PlayStation',
    'gaming',
    'pending',
    'manual',
    GAMING,
    'PlayStation family management: age levels, play time, spending and chat.',
  ),
  platform(
    'nintendo',
    'Nintendo Switch',
    'gaming',
    'pending',
    'manual',
    GAMING,
    'Nintendo Switch Parental Controls: ratings, play time, purchases and communication.',
  ),
  platform(
    'netflix',
    'Netflix',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'Profile maturity ratings and title restrictions.',
  ),
  platform(
    'disney_plus',
    'Disney+',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'Content ratings per profile and Kids Profiles.',
  ),
  platform(
    'prime_video',
    'Prime Video',
    'streaming',
    'pending',
    'manual',
    [...STREAMING, 'purchase_control'],
    'Viewing restrictions by rating and purchase PIN.',
  ),
  platform(
    'youtube',
    'YouTube',
    'streaming',
    'pending',
    'manual',
    [...STREAMING, 'safe_search', 'algorithmic_safety'],
    'Supervised experiences: content settings, restricted search and autoplay.',
  ),
  platform(
    'hulu',
    'Hulu',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'Kids profiles limited to kid-friendly ratings.',
  ),
  platform(
    'max',
    'Max',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'Profile parental controls by movie and TV rating.',
  ),
  platform(
    'roku',
    'Roku',
    'streaming',
    'pending',
    'manual',
    [...STREAMING, 'purchase_control'],
    'Channel Store and purchase restrictions, rating limits on The Roku Channel.',
  ),
  platform(
    'paramount_plus',
    'Paramount+',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'PIN-protected parental controls by rating.',
  ),
  platform(
    'youtube_tv',
    'YouTube TV',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'Content filters by TV rating.',
  ),
  platform(
    'peacock',
    'Peacock',
    'streaming',
    'pending',
    'manual',
    STREAMING,
    'Maturity settings by rating with a PIN.',
  ),
];

const BY_ID = new Map(PLATFORMS.map((p) => [p.platform_id, p]));

export function findPlatform(platformId: string): Platform | undefined {
  return BY_ID.get(platformId);
}
