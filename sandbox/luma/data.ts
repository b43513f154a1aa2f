/**
 * Deterministic generation of Luma events (legacy entry shape). Everything here is a pure
 * function of (seed, index, version): no Math.random, no clock.
 */
import { hash32, Rng } from '../shared/prng';

// Captured once (global lookups are slow inside Jest's vm sandbox).
const floor = Math.floor;
const DateCtor = Date;

// ---------------------------------------------------------------------------------------
// Shapes (legacy `/public/v1` API)
// ---------------------------------------------------------------------------------------

export type LumaVisibility = 'public' | 'members-only' | 'private';

export interface LumaGeoAddress {
  address: string;
  city: string;
  region: string;
  country: string;
  city_state: string;
  full_address: string;
  description: string;
  place_id: string;
  type: 'google';
}

export interface LumaEvent {
  api_id: string;
  calendar_api_id: string;
  user_api_id: string;
  name: string;
  description: string;
  description_md: string;
  start_at: string;
  end_at: string;
  duration_interval: string;
  timezone: string;
  created_at: string;
  geo_address_json: LumaGeoAddress | null;
  geo_latitude: string | null;
  geo_longitude: string | null;
  meeting_url: string | null;
  zoom_meeting_url: string | null;
  url: string;
  cover_url: string;
  visibility: LumaVisibility;
}

export interface LumaTag {
  api_id: string;
  name: string;
}

export interface LumaEventEntry {
  api_id: string;
  event: LumaEvent;
  tags: LumaTag[];
}

export interface LumaUser {
  api_id: string;
  name: string;
  email: string;
  avatar_url: string;
  first_name: string;
  last_name: string;
}

export interface LumaCalendar {
  api_id: string;
  name: string;
}

// ---------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------

interface City {
  city: string;
  region: string;
  country: string;
  timezone: string;
  lat: number;
  lng: number;
  streets: readonly string[];
  venues: readonly string[];
}

const CITIES: readonly City[] = [
  {
    city: 'San Francisco',
    region: 'California',
    country: 'United States',
    timezone: 'America/Los_Angeles',
    lat: 37.7749,
    lng: -122.4194,
    streets: ['Market St', 'Mission St', 'Valencia St', 'Howard St', 'Folsom St'],
    venues: ['The Commons', 'Founders Loft', 'Mission Hall', 'Shack15', 'Pier 70 Studio'],
  },
  {
    city: 'New York',
    region: 'New York',
    country: 'United States',
    timezone: 'America/New_York',
    lat: 40.7128,
    lng: -74.006,
    streets: ['Broadway', 'W 26th St', 'Bowery', 'Lafayette St', 'Kent Ave'],
    venues: ['Betaworks', 'The Yard', 'Brooklyn Navy Yard Bldg 77', 'Flatiron Studio', 'Neuehouse'],
  },
  {
    city: 'Austin',
    region: 'Texas',
    country: 'United States',
    timezone: 'America/Chicago',
    lat: 30.2672,
    lng: -97.7431,
    streets: ['Congress Ave', 'E 6th St', 'S Lamar Blvd', 'Red River St'],
    venues: ['Capital Factory', 'The Riveter', 'Eastside Loft'],
  },
  {
    city: 'Seattle',
    region: 'Washington',
    country: 'United States',
    timezone: 'America/Los_Angeles',
    lat: 47.6062,
    lng: -122.3321,
    streets: ['Pike St', 'Westlake Ave N', '1st Ave', 'Boren Ave N'],
    venues: ['Impact Hub', 'South Lake Union Commons', 'Pioneer Collective'],
  },
  {
    city: 'Toronto',
    region: 'Ontario',
    country: 'Canada',
    timezone: 'America/Toronto',
    lat: 43.6532,
    lng: -79.3832,
    streets: ['King St W', 'Queen St W', 'Spadina Ave', 'Front St E'],
    venues: ['MaRS Discovery District', 'Hub Collective', 'Spadina Works'],
  },
  {
    city: 'Mexico City',
    region: 'CDMX',
    country: 'Mexico',
    timezone: 'America/Mexico_City',
    lat: 19.4326,
    lng: -99.1332,
    streets: ['Av. Álvaro Obregón', 'Calle Colima', 'Av. Reforma', 'Calle Durango'],
    venues: ['Casa Roma', 'Condesa Lab', 'WeWork Reforma'],
  },
  {
    city: 'São Paulo',
    region: 'São Paulo',
    country: 'Brazil',
    timezone: 'America/Sao_Paulo',
    lat: -23.5505,
    lng: -46.6333,
    streets: ['Av. Paulista', 'Rua Augusta', 'Rua Oscar Freire', 'Av. Faria Lima'],
    venues: ['Cubo Itaú', 'Pinheiros Hub', 'Casa Paulista'],
  },
  {
    city: 'London',
    region: 'England',
    country: 'United Kingdom',
    timezone: 'Europe/London',
    lat: 51.5074,
    lng: -0.1278,
    streets: ['Old Street', 'Shoreditch High St', 'Great Eastern St', 'Kingsland Rd', 'Southwark St'],
    venues: ['Second Home', 'Google for Startups Campus', 'The Trampery', 'Somerset House Studios'],
  },
  {
    city: 'Berlin',
    region: 'Berlin',
    country: 'Germany',
    timezone: 'Europe/Berlin',
    lat: 52.52,
    lng: 13.405,
    streets: ['Torstraße', 'Oranienstraße', 'Friedrichstraße', 'Skalitzer Str.'],
    venues: ['Factory Berlin', 'betahaus', 'Spreewerk Loft'],
  },
  {
    city: 'Paris',
    region: 'Île-de-France',
    country: 'France',
    timezone: 'Europe/Paris',
    lat: 48.8566,
    lng: 2.3522,
    streets: ['Rue de Rivoli', 'Rue Oberkampf', 'Boulevard Voltaire', 'Rue du Faubourg Saint-Antoine'],
    venues: ['Station F', 'Le Comptoir', 'Atelier Voltaire'],
  },
  {
    city: 'Amsterdam',
    region: 'North Holland',
    country: 'Netherlands',
    timezone: 'Europe/Amsterdam',
    lat: 52.3676,
    lng: 4.9041,
    streets: ['Prinsengracht', 'Keizersgracht', 'Overhoeksplein', 'Wibautstraat'],
    venues: ['B. Amsterdam', 'A Lab', 'Startup Village'],
  },
  {
    city: 'Lisbon',
    region: 'Lisbon',
    country: 'Portugal',
    timezone: 'Europe/Lisbon',
    lat: 38.7223,
    lng: -9.1393,
    streets: ['Rua da Prata', 'Avenida da Liberdade', 'Rua Rodrigues de Faria'],
    venues: ['LX Factory', 'Second Home Lisboa', 'Hub Criativo do Beato'],
  },
  {
    city: 'Lagos',
    region: 'Lagos',
    country: 'Nigeria',
    timezone: 'Africa/Lagos',
    lat: 6.5244,
    lng: 3.3792,
    streets: ['Herbert Macaulay Way', 'Admiralty Way', 'Awolowo Rd'],
    venues: ['Co-Creation Hub', 'Workstation Lekki', 'Zone Tech Park'],
  },
  {
    city: 'Nairobi',
    region: 'Nairobi County',
    country: 'Kenya',
    timezone: 'Africa/Nairobi',
    lat: -1.2921,
    lng: 36.8219,
    streets: ['Ngong Rd', 'Waiyaki Way', 'Kenyatta Ave'],
    venues: ['iHub', 'Nairobi Garage', 'The Alchemist'],
  },
  {
    city: 'Dubai',
    region: 'Dubai',
    country: 'United Arab Emirates',
    timezone: 'Asia/Dubai',
    lat: 25.2048,
    lng: 55.2708,
    streets: ['Sheikh Zayed Rd', 'Al Wasl Rd', 'Alserkal Ave'],
    venues: ['Area 2071', 'DIFC Innovation Hub', 'Alserkal Warehouse 4'],
  },
  {
    city: 'Bengaluru',
    region: 'Karnataka',
    country: 'India',
    timezone: 'Asia/Kolkata',
    lat: 12.9716,
    lng: 77.5946,
    streets: ['100 Feet Rd', 'MG Road', 'Outer Ring Rd', '80 Feet Rd'],
    venues: ['91springboard', 'NUMA Koramangala', 'Bhive Workspace'],
  },
  {
    city: 'Singapore',
    region: 'Singapore',
    country: 'Singapore',
    timezone: 'Asia/Singapore',
    lat: 1.3521,
    lng: 103.8198,
    streets: ['Ayer Rajah Crescent', 'Robinson Rd', 'Telok Ayer St'],
    venues: ['Block71', 'The Hive Lavender', 'Lattice80'],
  },
  {
    city: 'Seoul',
    region: 'Seoul',
    country: 'South Korea',
    timezone: 'Asia/Seoul',
    lat: 37.5665,
    lng: 126.978,
    streets: ['Teheran-ro', 'Gangnam-daero', 'Yanghwa-ro'],
    venues: ['D.Camp', 'Maru180', 'Fast Five Seongsu'],
  },
  {
    city: 'Tokyo',
    region: 'Tokyo',
    country: 'Japan',
    timezone: 'Asia/Tokyo',
    lat: 35.6762,
    lng: 139.6503,
    streets: ['Shibuya', 'Roppongi', 'Marunouchi', 'Ebisu'],
    venues: ['CIC Tokyo', 'Shibuya QWS', 'Tokyo Midtown Lounge'],
  },
  {
    city: 'Sydney',
    region: 'New South Wales',
    country: 'Australia',
    timezone: 'Australia/Sydney',
    lat: -33.8688,
    lng: 151.2093,
    streets: ['George St', 'Harris St', 'Kent St', 'Crown St'],
    venues: ['Stone & Chalk', 'Fishburners', 'Tank Stream Labs'],
  },
];

const ONLINE_TIMEZONES: readonly string[] = [
  'America/Los_Angeles',
  'America/Denver',
  'America/Chicago',
  'America/New_York',
  'America/Sao_Paulo',
  'Europe/London',
  'Europe/Berlin',
  'Europe/Paris',
  'Europe/Madrid',
  'Africa/Johannesburg',
  'Asia/Kolkata',
  'Asia/Singapore',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Etc/UTC',
];

const TOPICS: readonly string[] = [
  'AI',
  'Generative AI',
  'Rust',
  'TypeScript',
  'Python',
  'Climate Tech',
  'Web3',
  'Design Systems',
  'Product Management',
  'Founders',
  'Indie Hackers',
  'Open Source',
  'Data Engineering',
  'DevRel',
  'Robotics',
  'Biotech',
  'Fintech',
  'Creators',
  'Photography',
  'Running Club',
  'Book Club',
  'Ceramics',
  'Women in Tech',
  'UX Research',
  'Security',
  'Kubernetes',
  'LLM Agents',
  'Hardware',
  'Game Dev',
  'Impact Investing',
  'Mobile Dev',
  'Growth Marketing',
  'Remote Work',
  'Quantum Computing',
];

const IN_PERSON_FORMATS: readonly string[] = [
  'Meetup',
  'Workshop',
  'Happy Hour',
  'Breakfast',
  'Hack Night',
  'Demo Day',
  'Fireside Chat',
  'Panel',
  'Summit',
  'Coworking Day',
  'Dinner',
  'Mixer',
  'Hackathon',
  'Brunch',
  'Social',
];

const ONLINE_FORMATS: readonly string[] = [
  'Webinar',
  'AMA',
  'Office Hours',
  'Study Group',
  'Livestream',
  'Virtual Meetup',
  'Workshop',
  'Panel',
  'Fireside Chat',
  'Reading Group',
  'Demo Day',
];

const ADJECTIVES: readonly string[] = [
  'Monthly',
  'Weekly',
  'Quarterly',
  'Spring',
  'Summer',
  'Autumn',
  'Winter',
  'Annual',
  'Beginner',
  'Advanced',
  'Intro to',
  'Hands-on',
  'Community',
  'Open',
  'Late Night',
  'Sunday',
];

const FIRST_NAMES: readonly string[] = [
  'Ada',
  'Amara',
  'Arjun',
  'Beatriz',
  'Chen',
  'Dario',
  'Elif',
  'Farah',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Kemi',
  'Lena',
  'Mateo',
  'Nadia',
  'Omar',
  'Priya',
  'Quinn',
  'Rosa',
  'Sami',
  'Tomás',
  'Uma',
  'Viktor',
  'Wen',
  'Yara',
  'Zoe',
];

const LAST_NAMES: readonly string[] = [
  'Adeyemi',
  'Bauer',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fernández',
  'Gupta',
  'Haddad',
  'Ito',
  'Jensen',
  'Kim',
  'Lindqvist',
  'Moreau',
  'Nakamura',
  'Okafor',
  'Park',
  'Quispe',
  'Rossi',
  'Santos',
  'Tanaka',
  'Usman',
  'Varga',
  'Wright',
  'Xu',
  'Yilmaz',
  'Zhang',
];

const CALENDAR_NAMES: readonly string[] = [
  'Weft Community',
  'Builders Collective',
  'Open Source Circle',
  'Product People',
  'Tech Tuesdays',
  'Makers Guild',
  'Founder Forum',
];

const TAG_NAMES: readonly string[] = [
  'Meetup',
  'Workshop',
  'Online',
  'In person',
  'Community',
  'Partner',
  'Featured',
  'Beginner friendly',
  'Hackathon',
  'Social',
  'Members only',
  'Talks',
];

const HOOKS: readonly string[] = [
  'Join us for an evening of talks, demos and good conversation.',
  'Whether you are just getting started or have been at it for years, you are welcome here.',
  'Bring a laptop, a question and a friend.',
  'We keep it small on purpose so everyone gets to talk.',
  'Expect practical takeaways, no sales pitches.',
  'A relaxed session to meet people working on similar problems.',
  'Our most requested format is back.',
];

const AGENDA_ITEMS: readonly string[] = [
  'Doors open and introductions',
  'Lightning talks (5 minutes each)',
  'Keynote and Q&A',
  'Live demo',
  'Breakout discussions',
  'Networking',
  'Hands-on exercise',
  'Open mic',
  'Panel discussion',
  'Wrap-up and next steps',
  'Pizza and drinks',
  'Coffee and pastries',
];

const DETAILS: readonly string[] = [
  'Space is limited, so please register only if you can make it.',
  'The session will be recorded and shared with registered guests.',
  'Light food and drinks will be provided.',
  'This event follows our community code of conduct.',
  'Please bring a government-issued ID for building access.',
  'Slides will be shared after the event.',
  'Questions can be submitted in advance when you register.',
];

// ---------------------------------------------------------------------------------------
// Generation
// ---------------------------------------------------------------------------------------

/** Fixed epoch for start dates: events spread over two years from 2024-01-01T00:00:00Z. */
const START_EPOCH_MS = Date.UTC(2024, 0, 1);
const START_SPAN_DAYS = 730;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** Durations in minutes, weighted towards typical event lengths. */
const DURATIONS: ReadonlyArray<readonly [number, number]> = [
  [30, 3],
  [45, 2],
  [60, 10],
  [90, 10],
  [120, 12],
  [150, 4],
  [180, 8],
  [240, 4],
  [360, 2],
  [480, 2],
  [1440, 1],
  [2880, 1],
  [4320, 0.5],
];

/** UTC hours at which events start (weighted, so most start in the afternoon/evening UTC). */
const START_HOURS: ReadonlyArray<readonly [number, number]> = [
  [0, 3],
  [1, 3],
  [2, 2],
  [3, 1],
  [8, 1],
  [9, 2],
  [10, 2],
  [11, 2],
  [12, 3],
  [13, 3],
  [14, 4],
  [15, 4],
  [16, 5],
  [17, 5],
  [18, 4],
  [19, 3],
  [20, 3],
  [21, 2],
  [22, 2],
  [23, 3],
];

const START_MINUTES: ReadonlyArray<readonly [number, number]> = [
  [0, 6],
  [30, 3],
  [15, 1],
  [45, 1],
];
const MODES: ReadonlyArray<readonly ['offline' | 'online' | 'hybrid', number]> = [
  ['offline', 55],
  ['online', 35],
  ['hybrid', 10],
];
const PROVIDERS: ReadonlyArray<readonly ['zoom' | 'meet' | 'youtube', number]> = [
  ['zoom', 5],
  ['meet', 3],
  ['youtube', 1],
];
const VISIBILITIES: ReadonlyArray<readonly [LumaVisibility, number]> = [
  ['public', 80],
  ['members-only', 10],
  ['private', 10],
];
/** Index into `Directory.hosts`: the API key's own user hosts most events. */
const HOST_WEIGHTS: ReadonlyArray<readonly [number, number]> = [
  [0, 5],
  [1, 1],
  [2, 1],
  [3, 1],
];
const TAG_COUNTS: ReadonlyArray<readonly [number, number]> = [
  [0, 3],
  [1, 4],
  [2, 3],
  [3, 2],
];

/** Formats minutes as an ISO 8601 duration: 90 → "PT1H30M", 1440 → "P1D", 1530 → "P1DT1H30M". */
export function isoDuration(minutes: number): string {
  const days = floor(minutes / 1440);
  const hours = floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  let out = 'P';
  if (days) out += `${days}D`;
  if (hours || mins) {
    out += 'T';
    if (hours) out += `${hours}H`;
    if (mins) out += `${mins}M`;
  }
  return out === 'P' ? 'PT0S' : out;
}

/** The part of an event needed to sort and page: cheap to compute for 100,000 events. */
export interface EventSkeleton {
  index: number;
  id: string;
  startMs: number;
  /** An event created through `POST /public/v1/event/create`: served as it was created, not generated. */
  created?: LumaEvent;
}

/** What `POST /public/v1/event/create` takes, checked by the simulator. */
export interface CreateEventFields {
  name: string;
  startMs: number;
  endMs: number;
  durationMin: number;
  timezone: string;
  description_md: string | null;
  meeting_url: string | null;
  geo_address_json: LumaGeoAddress | null;
  visibility: LumaVisibility;
}

/** The event Luma stores for a create request: the calendar's, hosted by the key's user, with a fresh slug. */
export function buildCreatedEvent(seedK: number, dir: Directory, index: number, id: string, fields: CreateEventFields, createdAtMs: number): LumaEvent {
  const rng = Rng.from(seedK, 'created', index);
  const md = fields.description_md ?? '';
  return {
    api_id: id,
    calendar_api_id: dir.calendar.api_id,
    user_api_id: dir.self.api_id,
    name: fields.name,
    description: mdToText(md),
    description_md: md,
    start_at: new DateCtor(fields.startMs).toISOString(),
    end_at: new DateCtor(fields.endMs).toISOString(),
    duration_interval: isoDuration(fields.durationMin),
    timezone: fields.timezone,
    created_at: new DateCtor(createdAtMs).toISOString(),
    geo_address_json: fields.geo_address_json,
    geo_latitude: null,
    geo_longitude: null,
    meeting_url: fields.meeting_url,
    zoom_meeting_url: fields.meeting_url && /(^|\.)zoom\.us$/.test(new URL(fields.meeting_url).hostname) ? fields.meeting_url : null,
    url: `https://lu.ma/${rng.lowerAlnum(8)}`,
    cover_url: makeCover(rng),
    visibility: fields.visibility,
  };
}

/** Seed number → the 32-bit seed every stream derives from. */
export function seedKey(seed: number): number {
  return hash32('luma', String(seed));
}

/** Event id for (seed, index); `attempt` > 0 only when resolving an (astronomically rare) collision. */
export function eventId(seedK: number, index: number, attempt = 0): string {
  return 'evt-' + Rng.from(seedK, 'id', index, attempt).alnum(14);
}

export function eventStartMs(seedK: number, index: number): number {
  const rng = Rng.from(seedK, 'start', index);
  const day = rng.int(0, START_SPAN_DAYS - 1);
  const hour = rng.weighted(START_HOURS);
  const minute = rng.weighted(START_MINUTES);
  return START_EPOCH_MS + day * DAY_MS + hour * HOUR_MS + minute * MINUTE_MS;
}

export interface Directory {
  calendar: LumaCalendar;
  self: LumaUser;
  /** Hosts that can appear as `user_api_id` (the first is the API key's own user). */
  hosts: LumaUser[];
  tags: LumaTag[];
}

function makeUser(seedK: number, n: number): LumaUser {
  const rng = Rng.from(seedK, 'user', n);
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const emailLocal = `${first}.${last}`
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
  return {
    api_id: 'usr-' + rng.alnum(14),
    name: `${first} ${last}`,
    email: `${emailLocal}@example.com`,
    avatar_url: `https://images.lumacdn.com/avatars/${rng.lowerAlnum(2)}/${rng.uuid()}`,
    first_name: first,
    last_name: last,
  };
}

export function makeDirectory(seedK: number, overrides: { calendar?: Partial<LumaCalendar>; user?: Partial<LumaUser> } = {}): Directory {
  const rng = Rng.from(seedK, 'directory');
  const calendar: LumaCalendar = {
    api_id: overrides.calendar?.api_id ?? 'cal-' + rng.alnum(14),
    name: overrides.calendar?.name ?? rng.pick(CALENDAR_NAMES),
  };
  const self: LumaUser = { ...makeUser(seedK, 0), ...overrides.user };
  const hosts = [self, makeUser(seedK, 1), makeUser(seedK, 2), makeUser(seedK, 3)];
  const tagCount = rng.int(8, TAG_NAMES.length);
  const tags = rng.sample(TAG_NAMES, tagCount).map((name, i) => ({
    api_id: 'tag-' + Rng.from(seedK, 'tag', i).alnum(14),
    name,
  }));
  return { calendar, self, hosts, tags };
}

function coord(base: number, rng: Rng): string {
  return (base + (rng.next() - 0.5) * 0.08).toFixed(7);
}

function makeName(rng: Rng, city: City | null, online: boolean): string {
  const topic = rng.pick(TOPICS);
  const format = rng.pick(online ? ONLINE_FORMATS : IN_PERSON_FORMATS);
  switch (rng.int(0, 4)) {
    case 0:
      return `${rng.pick(ADJECTIVES)} ${topic} ${format}`;
    case 1:
      return city ? `${topic} ${format} ${city.city}` : `${topic} ${format} (Online)`;
    case 2:
      return `${topic} ${format} #${rng.int(2, 60)}`;
    case 3:
      return `${topic} ${format}: ${rng.pick(['Lessons Learned', 'What Is Next', 'Show and Tell', 'Deep Dive', 'State of the Art', 'Getting Started', 'In Production'])}`;
    default:
      return `${topic} ${format}`;
  }
}

function makeDescriptionMd(rng: Rng, name: string, where: string): string {
  const items = rng.sample(AGENDA_ITEMS, rng.int(2, 4));
  const lines = [
    `**${name}**`,
    '',
    `${rng.pick(HOOKS)} ${rng.pick(HOOKS)}`,
    '',
    `**Agenda**`,
    ...items.map((it) => `- ${it}`),
    '',
    `📍 ${where}`,
    '',
    rng.pick(DETAILS),
  ];
  return lines.join('\n');
}

/** Plain-text rendering of our (very small) Markdown subset, as Luma's `description` is. */
function mdToText(md: string): string {
  return md.replace(/\*\*(.+?)\*\*/g, '$1').replace(/^- /gm, '• ');
}

function makeCover(rng: Rng): string {
  return `https://images.lumacdn.com/event-covers/${rng.lowerAlnum(2)}/${rng.uuid()}.${rng.pick(['png', 'jpg', 'webp'])}`;
}

/** Fields an edit changes; a pure function of (seed, index, version). */
interface EditableFields {
  name: string;
  description: string;
  description_md: string;
  cover_url: string;
}

/**
 * Builds the full entry. `version` 0 is the original; each edit bumps it and changes
 * name, description, description_md and cover_url (never ids, dates, location or tags).
 */
export function buildEntry(seedK: number, dir: Directory, skel: EventSkeleton, version: number): LumaEventEntry {
  const rng = Rng.from(seedK, 'detail', skel.index);

  const durationMin = rng.weighted(DURATIONS);
  const mode = rng.weighted(MODES);
  const online = mode !== 'offline';
  const city = mode === 'online' ? null : rng.pick(CITIES);
  const timezone = city ? city.timezone : rng.pick(ONLINE_TIMEZONES);

  let geo: LumaGeoAddress | null = null;
  let lat: string | null = null;
  let lng: string | null = null;
  if (city) {
    const venue = rng.pick(city.venues);
    const address = `${rng.int(1, 999)} ${rng.pick(city.streets)}`;
    const cityState = `${city.city}, ${city.region}`;
    geo = {
      address,
      city: city.city,
      region: city.region,
      country: city.country,
      city_state: cityState,
      full_address: `${venue}, ${address}, ${city.city}, ${city.region}, ${city.country}`,
      description: venue,
      place_id: 'ChIJ' + rng.alnum(23),
      type: 'google',
    };
    lat = coord(city.lat, rng);
    lng = coord(city.lng, rng);
  }

  let meetingUrl: string | null = null;
  let zoomUrl: string | null = null;
  if (online) {
    const provider = rng.weighted(PROVIDERS);
    if (provider === 'zoom') {
      meetingUrl = `https://us0${rng.int(2, 6)}web.zoom.us/j/8${rng.digits(10)}?pwd=${rng.alnum(32)}`;
      zoomUrl = meetingUrl;
    } else if (provider === 'meet') {
      meetingUrl = `https://meet.google.com/${rng.lower(3)}-${rng.lower(4)}-${rng.lower(3)}`;
    } else {
      meetingUrl = `https://www.youtube.com/live/${rng.alnum(11)}`;
    }
  }

  const visibility = rng.weighted(VISIBILITIES);
  const host = dir.hosts[rng.weighted(HOST_WEIGHTS)] ?? dir.self;
  const createdAgoMs = rng.int(HOUR_MS, 120 * DAY_MS) + rng.int(0, 59_999);
  const tags = rng.sample(dir.tags, rng.weighted(TAG_COUNTS));
  const slug = rng.lowerAlnum(8);

  const fields = editableFields(seedK, skel.index, version, city, online, geo);

  return {
    api_id: skel.id,
    event: {
      api_id: skel.id,
      calendar_api_id: dir.calendar.api_id,
      user_api_id: host.api_id,
      name: fields.name,
      description: fields.description,
      description_md: fields.description_md,
      start_at: new DateCtor(skel.startMs).toISOString(),
      end_at: new DateCtor(skel.startMs + durationMin * MINUTE_MS).toISOString(),
      duration_interval: isoDuration(durationMin),
      timezone,
      created_at: new DateCtor(skel.startMs - createdAgoMs).toISOString(),
      geo_address_json: geo,
      geo_latitude: lat,
      geo_longitude: lng,
      meeting_url: meetingUrl,
      zoom_meeting_url: zoomUrl,
      url: `https://lu.ma/${slug}`,
      cover_url: fields.cover_url,
      visibility,
    },
    tags: tags.map((t) => ({ api_id: t.api_id, name: t.name })),
  };
}

function editableFields(seedK: number, index: number, version: number, city: City | null, online: boolean, geo: LumaGeoAddress | null): EditableFields {
  const rng = Rng.from(seedK, 'content', index, version);
  let name = makeName(rng, city, online);
  if (version > 0) {
    // Guarantee an edit really changes the name (and therefore the description).
    const previous = editableFields(seedK, index, version - 1, city, online, geo).name;
    if (name === previous) name = `${name} (Updated)`;
    if (name === previous) name = `${name} (v${version + 1})`;
  }
  const where = geo ? (online ? `${geo.full_address} — and online for remote guests` : geo.full_address) : 'Online — the link is shared with registered guests';
  const md = makeDescriptionMd(rng, name, where);
  return { name, description: mdToText(md), description_md: md, cover_url: makeCover(rng) };
}
