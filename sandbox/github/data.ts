/**
 * Deterministic generation of the simulated GitHub world: accounts, repositories, pull
 * requests and their commits. Records here hold only numbers and references; the JSON
 * shapes are built on demand in `render.ts`, so thousands of pull requests stay cheap.
 * Everything is a pure function of (seed key, identifiers): no Math.random, no clock.
 */
import { hash32, Rng } from '../shared/prng';

// Captured once (global lookups are slow inside Jest's vm sandbox).
const floor = Math.floor;

// ---------------------------------------------------------------------------------------
// Time frame of the seeded data
// ---------------------------------------------------------------------------------------

/** Seeded repositories are created between these dates. */
const REPO_CREATED_FROM_MS = Date.UTC(2016, 0, 1);
const REPO_CREATED_TO_MS = Date.UTC(2023, 5, 30);
/**
 * Seeded activity ends here (a fixed date, not the clock, so the same seed gives the same
 * bytes on every run). Mutations made through the control API are stamped with the clock.
 */
export const DATA_END_MS = Date.UTC(2026, 0, 1);

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

/** GitHub timestamps have whole seconds: "2024-05-01T12:00:00Z". */
export function isoSeconds(ms: number): string {
  return new Date(floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export function seedKey(seed: number): number {
  return hash32('github', String(seed));
}

// ---------------------------------------------------------------------------------------
// Accounts
// ---------------------------------------------------------------------------------------

export type AccountType = 'User' | 'Organization' | 'Bot';

export interface Account {
  login: string;
  id: number;
  type: AccountType;
}

/** An account that authors commits (a human user or a bot). */
export interface Person extends Account {
  name: string;
  /** The email commits carry; GitHub links it to the account. */
  email: string;
}

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
  'Tomas',
  'Uma',
  'Viktor',
  'Wen',
  'Yara',
  'Zoe',
  'Malik',
  'Sofia',
  'Noah',
];
const LAST_NAMES: readonly string[] = [
  'Adeyemi',
  'Bauer',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fernandez',
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
const LOGIN_SUFFIXES: readonly string[] = ['', '', '', '-dev', '-gh', '42', '-codes', '-io', '7', '-x'];

const DEPENDABOT: Person = {
  login: 'dependabot[bot]',
  id: 49699333,
  type: 'Bot',
  name: 'dependabot[bot]',
  email: '49699333+dependabot[bot]@users.noreply.github.com',
};
const RENOVATE: Person = {
  login: 'renovate[bot]',
  id: 29139614,
  type: 'Bot',
  name: 'renovate[bot]',
  email: '29139614+renovate[bot]@users.noreply.github.com',
};
/** The committer of commits made through the web UI or merges: GitHub itself. */
const WEB_FLOW = { name: 'GitHub', email: 'noreply@github.com', login: 'web-flow', id: 19864447, type: 'User' as const };

export interface Directory {
  /** Human users who open pull requests, review and commit. */
  users: Person[];
}

export function makeDirectory(seedK: number, reservedLogins: ReadonlySet<string>): Directory {
  const users: Person[] = [];
  const logins = new Set<string>([...reservedLogins].map((l) => l.toLowerCase()));
  const ids = new Set<number>();
  for (let i = 0; users.length < 40; i++) {
    const rng = Rng.from(seedK, 'user', i);
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const style = rng.int(0, 3);
    const base = style === 0 ? `${first}${last}` : style === 1 ? `${first[0]}${last}` : style === 2 ? `${first}-${last}` : `${first}${rng.int(1, 99)}`;
    const login = (base + rng.pick(LOGIN_SUFFIXES)).toLowerCase();
    let id = rng.int(1_000_000, 160_000_000);
    if (logins.has(login)) continue;
    while (ids.has(id)) id++;
    logins.add(login);
    ids.add(id);
    users.push({ login, id, type: 'User', name: `${first} ${last}`, email: `${id}+${login}@users.noreply.github.com` });
  }
  return { users };
}

/** The account an installation belongs to; its id derives from the login. */
export function makeOwnerAccount(seedK: number, login: string, type: 'Organization' | 'User'): Account {
  return { login, id: Rng.from(seedK, 'account', login.toLowerCase()).int(1_000_000, 190_000_000), type };
}

// ---------------------------------------------------------------------------------------
// Repositories
// ---------------------------------------------------------------------------------------

export interface LabelRec {
  id: number;
  name: string;
  color: string;
  isDefault: boolean;
  description: string;
}

export interface MilestoneRec {
  id: number;
  number: number;
  title: string;
  description: string | null;
  creator: Person;
  createdMs: number;
  dueMs: number | null;
  closed: boolean;
}

export interface TeamRec {
  id: number;
  name: string;
  slug: string;
  description: string;
}

export interface RepoRec {
  id: number;
  /** The App's installation on the owner's account; null while the App is not installed there. */
  installationId: number | null;
  owner: Account;
  name: string;
  fullName: string;
  /** Set when removed from the installation: every route then answers 404. */
  removed: boolean;
  private: boolean;
  fork: boolean;
  description: string | null;
  language: string | null;
  homepage: string | null;
  license: { key: string; name: string; spdx_id: string } | null;
  topics: string[];
  defaultBranch: string;
  createdMs: number;
  updatedMs: number;
  pushedMs: number;
  sizeKb: number;
  stars: number;
  forks: number;
  subscribers: number;
  /** Open issues that are not pull requests (open_issues_count counts both). */
  openIssues: number;
  hasWiki: boolean;
  hasProjects: boolean;
  hasPages: boolean;
  hasDiscussions: boolean;
  labels: LabelRec[];
  milestones: MilestoneRec[];
  teams: TeamRec[];
  /** Stream key for everything derived from this repository. */
  key: number;
}

const REPO_PREFIXES: readonly string[] = [
  'api',
  'web',
  'mobile',
  'data',
  'infra',
  'auth',
  'billing',
  'search',
  'docs',
  'design',
  'platform',
  'payments',
  'notifications',
  'analytics',
  'ml',
  'edge',
  'admin',
  'checkout',
  'identity',
  'ledger',
];
const REPO_SUFFIXES: readonly string[] = [
  'service',
  'app',
  'gateway',
  'pipeline',
  'worker',
  'sdk',
  'cli',
  'dashboard',
  'core',
  'tools',
  'client',
  'server',
  'infra',
  'proto',
  'jobs',
  'ui',
  'scheduler',
  'sync',
  'store',
  'bot',
];
const LANGUAGES: ReadonlyArray<readonly [string | null, number]> = [
  ['TypeScript', 30],
  ['Go', 15],
  ['Python', 15],
  ['JavaScript', 8],
  ['Rust', 6],
  ['Java', 5],
  ['Kotlin', 4],
  ['Ruby', 4],
  ['HCL', 4],
  ['Swift', 3],
  ['Shell', 3],
  ['C#', 2],
  [null, 2],
];
const DESCRIPTIONS: readonly string[] = [
  'Core service powering the public API',
  'Customer-facing web application',
  'Shared libraries and tooling',
  'Infrastructure as code for production and staging',
  'Background jobs and queue workers',
  'Design system components',
  'Internal admin dashboard',
  'Event ingestion pipeline',
  'Command-line tools for developers',
  'Client SDK',
  'Data models and migrations',
  'Documentation site',
];
const TOPICS: readonly string[] = [
  'api',
  'backend',
  'frontend',
  'typescript',
  'golang',
  'python',
  'infrastructure',
  'terraform',
  'kubernetes',
  'microservice',
  'react',
  'cli',
  'sdk',
  'data',
  'etl',
  'monorepo',
  'grpc',
  'graphql',
  'postgres',
  'observability',
];
const LICENSES: ReadonlyArray<{ key: string; name: string; spdx_id: string }> = [
  { key: 'mit', name: 'MIT License', spdx_id: 'MIT' },
  { key: 'apache-2.0', name: 'Apache License 2.0', spdx_id: 'Apache-2.0' },
  { key: 'bsd-3-clause', name: 'BSD 3-Clause "New" or "Revised" License', spdx_id: 'BSD-3-Clause' },
  { key: 'mpl-2.0', name: 'Mozilla Public License 2.0', spdx_id: 'MPL-2.0' },
];
/** GitHub's default labels, then a few custom ones. */
/**
 * Every label has a description: the pull request list's label objects require a string
 * there in GitHub's REST description (a label without one would be sent as null).
 */
const LABELS: ReadonlyArray<readonly [string, string, boolean, string]> = [
  ['bug', 'd73a4a', true, "Something isn't working"],
  ['documentation', '0075ca', true, 'Improvements or additions to documentation'],
  ['duplicate', 'cfd3d7', true, 'This issue or pull request already exists'],
  ['enhancement', 'a2eeef', true, 'New feature or request'],
  ['good first issue', '7057ff', true, 'Good for newcomers'],
  ['help wanted', '008672', true, 'Extra attention is needed'],
  ['invalid', 'e4e669', true, "This doesn't seem right"],
  ['question', 'd876e3', true, 'Further information is requested'],
  ['wontfix', 'ffffff', true, 'This will not be worked on'],
  ['dependencies', '0366d6', false, 'Pull requests that update a dependency file'],
  ['breaking change', 'b60205', false, 'Changes what existing callers rely on'],
  ['needs review', 'fbca04', false, 'Waiting for a reviewer'],
  ['performance', '5319e7', false, 'Makes something faster or lighter'],
  ['security', 'ee0701', false, 'Security fix or hardening'],
];
const TEAM_NAMES: readonly string[] = ['Backend', 'Frontend', 'Platform', 'Security', 'Data', 'Mobile', 'Release Managers'];

/** Picks a name not yet used by the owner. */
export function pickRepoName(seedK: number, ownerLogin: string, index: number, taken: ReadonlySet<string>): string {
  for (let attempt = 0; attempt < 50; attempt++) {
    const rng = Rng.from(seedK, 'repo-name', ownerLogin.toLowerCase(), index, attempt);
    const name = `${rng.pick(REPO_PREFIXES)}-${rng.pick(REPO_SUFFIXES)}`;
    if (!taken.has(name.toLowerCase())) return name;
  }
  let n = index + 1;
  while (taken.has(`repo-${n}`)) n++;
  return `repo-${n}`;
}

/**
 * A repository of `owner`, deterministic from (seed, owner login, name). `id` is chosen by
 * the caller (it must be unique across the simulated world).
 */
export function makeRepo(
  seedK: number,
  args: { id: number; installationId: number | null; owner: Account; name: string; directory: Directory; activityEndMs: number },
): RepoRec {
  const key = hash32(seedK, 'repo', args.owner.login.toLowerCase(), args.name.toLowerCase());
  const rng = new Rng(key);
  const isPrivate = rng.chance(0.7);
  const createdMs = rng.int(REPO_CREATED_FROM_MS / 1000, REPO_CREATED_TO_MS / 1000) * 1000;
  const end = Math.max(args.activityEndMs, createdMs + DAY_MS);
  const pushedMs = end - rng.int(0, (20 * DAY_MS) / 1000) * 1000;
  const stars = isPrivate ? rng.int(0, 6) : rng.int(0, 2_500);
  const labels: LabelRec[] = LABELS.filter((l, i) => l[2] || i < 10 || rng.chance(0.5)).map(([name, color, isDefault, description]) => ({
    id: (hash32(key, 'label', name) % 7_000_000_000) + 1_000_000_000,
    name,
    color,
    isDefault,
    description,
  }));
  const milestones: MilestoneRec[] = [];
  const milestoneCount = rng.int(0, 3);
  for (let m = 0; m < milestoneCount; m++) {
    const mc = Rng.from(key, 'milestone', m);
    const created = createdMs + mc.int(30, 900) * DAY_MS;
    milestones.push({
      id: 5_000_000 + (hash32(key, 'milestone-id', m) % 9_000_000),
      number: m + 1,
      title: mc.pick(['v1.0', 'v1.1', 'v2.0', 'Q3 roadmap', 'Beta', 'GA launch', 'Hardening', 'Next release']) + (m ? ` (${m + 1})` : ''),
      description: mc.chance(0.5) ? 'Work planned for this release.' : null,
      creator: mc.pick(args.directory.users),
      createdMs: Math.min(created, end - DAY_MS),
      dueMs: mc.chance(0.6) ? created + mc.int(14, 120) * DAY_MS : null,
      closed: m < milestoneCount - 1 && mc.chance(0.5),
    });
  }
  const teams: TeamRec[] =
    args.owner.type === 'Organization'
      ? rng.sample(TEAM_NAMES, rng.int(1, 3)).map((name) => ({
          id: 1_000_000 + (hash32(seedK, 'team', args.owner.login.toLowerCase(), name) % 12_000_000),
          name,
          slug: name.toLowerCase().replace(/\s+/g, '-'),
          description: `${name} team`,
        }))
      : [];
  const language = rng.weighted(LANGUAGES);
  return {
    id: args.id,
    installationId: args.installationId,
    owner: args.owner,
    name: args.name,
    fullName: `${args.owner.login}/${args.name}`,
    removed: false,
    private: isPrivate,
    fork: false,
    description: rng.chance(0.85) ? rng.pick(DESCRIPTIONS) : null,
    language,
    homepage: !isPrivate && rng.chance(0.3) ? `https://${args.name}.example.com` : null,
    license: isPrivate ? null : rng.chance(0.8) ? rng.pick(LICENSES) : null,
    topics: rng.sample(
      TOPICS,
      rng.weighted([
        [0, 3],
        [1, 2],
        [2, 2],
        [3, 2],
        [5, 1],
      ] as const),
    ),
    defaultBranch: rng.chance(0.85) ? 'main' : 'master',
    createdMs,
    updatedMs: Math.max(createdMs, pushedMs - rng.int(0, (5 * DAY_MS) / 1000) * 1000),
    pushedMs,
    sizeKb: rng.int(40, 250_000),
    stars,
    forks: floor(stars / rng.int(4, 12)),
    subscribers: rng.int(1, 40),
    openIssues: rng.int(0, 60),
    hasWiki: rng.chance(0.4),
    hasProjects: rng.chance(0.6),
    hasPages: !isPrivate && rng.chance(0.1),
    hasDiscussions: !isPrivate && rng.chance(0.2),
    labels,
    milestones,
    teams,
    key,
  };
}

// ---------------------------------------------------------------------------------------
// Pull requests
// ---------------------------------------------------------------------------------------

export type BotKind = 'dependabot' | 'renovate' | null;

export interface PullRec {
  repo: RepoRec;
  number: number;
  id: number;
  /** Stream key for everything derived from this pull request. */
  key: number;
  bot: BotKind;
  author: Person;
  authorAssociation: string;
  /** Owner of the head branch: the repository owner, or a fork's owner. */
  headOwner: Account;
  headRef: string;
  baseRef: string;
  createdMs: number;
  updatedMs: number;
  closedMs: number | null;
  mergedMs: number | null;
  mergedBy: Account | null;
  state: 'open' | 'closed';
  draft: boolean;
  locked: boolean;
  comments: number;
  reviewComments: number;
  labelIds: number[];
  milestoneNumber: number | null;
  assignees: Account[];
  reviewers: Account[];
  teamIds: number[];
  /** Open pull requests only: GitHub's background mergeability result (null = not computed). */
  mergeable: boolean | null;
  /** Commits generated with the pull request, and when the last of them was made. */
  seededCommits: number;
  seededLastCommitMs: number;
  /** Dates of commits pushed later through `addCommits`, in order. */
  addedCommitMs: number[];
  /** Bumped by edits: the title and body derive from it. */
  contentVersion: number;
  /** Title and body set through `PATCH /repos/{o}/{r}/pulls/{n}`: they win while the content version is the one they were set at. */
  edited?: { contentVersion: number; title: string; body: string | null };
  /** Bumped by every update: the merge commit sha derives from it. */
  revision: number;
  additions: number;
  deletions: number;
  changedFiles: number;
}

const AREAS: readonly string[] = [
  'webhook handler',
  'token refresh',
  'pagination',
  'retry logic',
  'rate limiter',
  'cache layer',
  'login flow',
  'billing export',
  'search index',
  'CI pipeline',
  'Dockerfile',
  'logging',
  'metrics',
  'config loader',
  'database migrations',
  'API client',
  'error pages',
  'settings screen',
  'job scheduler',
  'feature flags',
];
const FIX_VERBS: readonly string[] = ['Fix', 'Handle', 'Guard against', 'Avoid', 'Correct'];
const FIX_OBJECTS: readonly string[] = [
  'race in',
  'null user in',
  'timeout in',
  'off-by-one in',
  'memory leak in',
  'flaky test for',
  'crash in',
  'double submit in',
  'stale state in',
  'unicode handling in',
];
const FEAT_VERBS: readonly string[] = ['Add', 'Support', 'Introduce', 'Implement', 'Enable'];
const FEAT_OBJECTS: readonly string[] = [
  'cursor pagination for',
  'retries with backoff to',
  'dark mode in',
  'audit events for',
  'bulk export in',
  'OpenTelemetry spans in',
  'structured logs in',
  'a health check for',
  'tenant isolation in',
  'dry-run mode for',
];
const CHORE_TITLES: readonly string[] = [
  'Refactor {area} into smaller modules',
  'Update README for {area}',
  'Remove dead code from {area}',
  'Tighten types in {area}',
  'Speed up {area}',
  'Document {area} configuration',
  'Clean up {area} tests',
];
const PACKAGES: ReadonlyArray<readonly [string, string]> = [
  ['lodash', 'npm_and_yarn'],
  ['axios', 'npm_and_yarn'],
  ['express', 'npm_and_yarn'],
  ['zod', 'npm_and_yarn'],
  ['golang.org/x/net', 'go_modules'],
  ['github.com/stretchr/testify', 'go_modules'],
  ['requests', 'pip'],
  ['django', 'pip'],
  ['actions/checkout', 'github_actions'],
  ['actions/setup-node', 'github_actions'],
  ['serde', 'cargo'],
  ['tokio', 'cargo'],
];
const BRANCH_PREFIXES: readonly string[] = ['feature', 'fix', 'chore', 'refactor', 'feat', 'bugfix', 'docs'];

function slugify(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40);
}

function version(rng: Rng): [string, string] {
  const major = rng.int(0, 9);
  const minor = rng.int(0, 30);
  const patch = rng.int(0, 20);
  return [`${major}.${minor}.${patch}`, `${major}.${minor + rng.int(0, 1)}.${patch + rng.int(1, 5)}`];
}

/** Dependency bump details of a bot pull request (fixed at creation). */
function botBump(pullKey: number): { pkg: string; ecosystem: string; from: string; to: string } {
  const rng = Rng.from(pullKey, 'bump');
  const [pkg, ecosystem] = rng.pick(PACKAGES);
  const [from, to] = version(rng);
  return { pkg, ecosystem, from, to };
}

/** The title for a pull request at a content version (edits change it). */
export function pullTitle(pull: PullRec): string {
  if (pull.edited?.contentVersion === pull.contentVersion) return pull.edited.title;
  if (pull.bot) {
    const b = botBump(pull.key);
    const base = pull.bot === 'dependabot' ? `Bump ${b.pkg} from ${b.from} to ${b.to}` : `chore(deps): update ${b.pkg} to v${b.to}`;
    return pull.contentVersion === 0 ? base : `${base} (rebased ${pull.contentVersion}x)`;
  }
  const rng = Rng.from(pull.key, 'title', pull.contentVersion);
  const area = rng.pick(AREAS);
  let title: string;
  switch (rng.int(0, 2)) {
    case 0:
      title = `${rng.pick(FIX_VERBS)} ${rng.pick(FIX_OBJECTS)} ${area}`;
      break;
    case 1:
      title = `${rng.pick(FEAT_VERBS)} ${rng.pick(FEAT_OBJECTS)} ${area}`;
      break;
    default:
      title = rng.pick(CHORE_TITLES).replace('{area}', area);
  }
  if (pull.contentVersion > 0) title = `${title} (v${pull.contentVersion + 1})`;
  if (pull.draft && rng.chance(0.5)) title = `WIP: ${title}`;
  return title;
}

export function pullBody(pull: PullRec): string | null {
  if (pull.edited?.contentVersion === pull.contentVersion) return pull.edited.body;
  const rng = Rng.from(pull.key, 'body', pull.contentVersion);
  if (pull.bot === 'dependabot') {
    const b = botBump(pull.key);
    return `Bumps [${b.pkg}](https://github.com/${b.pkg}) from ${b.from} to ${b.to}.\n\n[![Dependabot compatibility score](https://dependabot-badges.githubapp.com/badges/compatibility_score?dependency-name=${encodeURIComponent(b.pkg)}&package-manager=${b.ecosystem}&previous-version=${b.from}&new-version=${b.to})](https://docs.github.com/en/github/managing-security-vulnerabilities/about-dependabot-security-updates#about-compatibility-scores)\n\nDependabot will resolve any conflicts with this PR as long as you don't alter it yourself.`;
  }
  if (pull.bot === 'renovate') {
    const b = botBump(pull.key);
    return `This PR contains the following updates:\n\n| Package | Change |\n|---|---|\n| ${b.pkg} | \`${b.from}\` -> \`${b.to}\` |\n\n---\n\nThis PR was generated by Mend Renovate.`;
  }
  if (rng.chance(0.12)) return null;
  const lines = [
    '## Summary',
    '',
    rng.pick([
      'This change makes the behaviour predictable under load.',
      'Small, self-contained change; no API changes.',
      'Follow-up to the incident review from last week.',
      'Splits the work into reviewable pieces.',
      'Addresses feedback from the design review.',
    ]),
    '',
    '## Testing',
    '',
    `- [${rng.chance(0.8) ? 'x' : ' '}] Unit tests`,
    `- [${rng.chance(0.5) ? 'x' : ' '}] Tested locally`,
  ];
  if (rng.chance(0.3)) lines.push('', `Closes #${rng.int(1, Math.max(1, pull.number))}`);
  return lines.join('\r\n');
}

function headRefFor(pullKey: number, bot: BotKind, defaultBranch: string): string {
  if (bot) {
    const b = botBump(pullKey);
    return bot === 'dependabot'
      ? `dependabot/${b.ecosystem}/${b.pkg.replace(/[^A-Za-z0-9._/-]/g, '')}-${b.to}`
      : `renovate/${slugify(b.pkg)}-${b.to.split('.')[0]}.x`;
  }
  const rng = Rng.from(pullKey, 'branch');
  const ref = `${rng.pick(BRANCH_PREFIXES)}/${slugify(rng.pick(AREAS))}-${rng.int(10, 9999)}`;
  return ref === defaultBranch ? `${ref}-2` : ref;
}

export interface PullSeedArgs {
  repo: RepoRec;
  directory: Directory;
  number: number;
  id: number;
  createdMs: number;
  /** Activity after creation is stamped no later than this. */
  endMs: number;
  /** 0..1: how recent the pull request is among its repository's (later ones stay open more often). */
  recency: number;
  /** Inclusive range for the number of commits (bots push the minimum). */
  commitRange: readonly [number, number];
  /** Pull requests created through the control API start open, with no activity yet. */
  fresh: boolean;
}

/** Generates one pull request record (its text and commits are derived on demand). */
export function makePull(seedK: number, a: PullSeedArgs): PullRec {
  const key = hash32(seedK, 'pull', a.repo.id, a.number);
  const rng = new Rng(key);
  const users = a.directory.users;
  const bot: BotKind = rng.chance(0.12) ? (rng.chance(0.7) ? 'dependabot' : 'renovate') : null;
  const author: Person = bot === 'dependabot' ? DEPENDABOT : bot === 'renovate' ? RENOVATE : rng.pick(users);
  const fromFork = !bot && !a.repo.private && rng.chance(0.08);
  const headOwner: Account = fromFork ? author : a.repo.owner;
  const authorAssociation = bot
    ? 'CONTRIBUTOR'
    : fromFork
      ? rng.pick(['CONTRIBUTOR', 'FIRST_TIME_CONTRIBUTOR', 'NONE'])
      : a.repo.owner.type === 'Organization'
        ? rng.weighted([
            ['MEMBER', 8],
            ['COLLABORATOR', 2],
          ] as const)
        : rng.weighted([
            ['COLLABORATOR', 3],
            ['CONTRIBUTOR', 1],
          ] as const);
  const baseRef = !bot && rng.chance(0.1) ? rng.pick(['develop', 'release/2.x', 'next']) : a.repo.defaultBranch;

  // Later pull requests are more often still open; bots' ones are merged fast.
  const pOpen = a.fresh ? 1 : 0.08 + 0.45 * a.recency * a.recency * a.recency;
  const open = rng.chance(pOpen);
  const merged = !open && rng.chance(bot ? 0.9 : 0.8);
  const lifetimeMs = bot ? rng.int(10, 3 * 24 * 60) * MINUTE_MS : rng.int(20, 20 * 24 * 60) * MINUTE_MS;
  const lastActivity = a.endMs - MINUTE_MS;
  let closedMs: number | null = null;
  let updatedMs: number;
  if (a.fresh) {
    updatedMs = a.createdMs;
  } else if (open) {
    updatedMs = a.createdMs + floor(rng.next() * Math.max(0, lastActivity - a.createdMs));
  } else {
    closedMs = Math.min(a.createdMs + lifetimeMs, lastActivity);
    updatedMs = rng.chance(0.3) ? Math.min(closedMs + rng.int(1, 72 * 60) * MINUTE_MS, lastActivity) : closedMs;
  }
  closedMs = closedMs === null ? null : Math.max(closedMs, a.createdMs);
  updatedMs = Math.max(updatedMs, a.createdMs);
  const maintainers = users.filter((u) => u.id !== author.id);
  const draft = open && !bot && rng.chance(0.12);
  const labelPool = bot ? a.repo.labels.filter((l) => l.name === 'dependencies') : a.repo.labels;
  const labelIds = (
    bot
      ? labelPool
      : rng.sample(
          labelPool,
          rng.weighted([
            [0, 5],
            [1, 3],
            [2, 2],
            [3, 1],
          ] as const),
        )
  ).map((l) => l.id);
  const milestone = !bot && a.repo.milestones.length > 0 && rng.chance(0.2) ? rng.pick(a.repo.milestones).number : null;
  const assignees = bot
    ? []
    : rng.sample(
        maintainers,
        rng.weighted([
          [0, 6],
          [1, 3],
          [2, 1],
        ] as const),
      );
  const reviewers =
    open && !draft
      ? rng.sample(
          maintainers,
          rng.weighted([
            [0, 4],
            [1, 4],
            [2, 2],
          ] as const),
        )
      : [];
  const teamIds = open && a.repo.teams.length > 0 && rng.chance(0.15) ? [rng.pick(a.repo.teams).id] : [];
  const commitsEnd = closedMs ?? Math.max(a.createdMs, Math.min(updatedMs, a.createdMs + lifetimeMs));
  const files = rng.int(1, bot ? 2 : 40);
  return {
    repo: a.repo,
    number: a.number,
    id: a.id,
    key,
    bot,
    author,
    authorAssociation,
    headOwner,
    headRef: headRefFor(key, bot, a.repo.defaultBranch),
    baseRef,
    createdMs: a.createdMs,
    updatedMs,
    closedMs,
    mergedMs: merged ? closedMs : null,
    mergedBy: merged ? (bot ? rng.pick(users) : rng.pick(rng.chance(0.6) ? [author] : users)) : null,
    state: open ? 'open' : 'closed',
    draft,
    locked: !open && rng.chance(0.03),
    comments: a.fresh
      ? 0
      : rng.weighted([
          [0, 8],
          [1, 5],
          [2, 4],
          [3, 3],
          [5, 2],
          [8, 1],
          [13, 1],
          [21, 0.5],
        ] as const) + rng.int(0, 1),
    reviewComments:
      a.fresh || bot
        ? 0
        : rng.weighted([
            [0, 6],
            [1, 3],
            [3, 2],
            [7, 1],
            [15, 0.5],
          ] as const),
    labelIds,
    milestoneNumber: milestone,
    assignees,
    reviewers,
    teamIds,
    mergeable: open
      ? rng.weighted([
          [true, 75],
          [false, 10],
          [null, 15],
        ] as const)
      : null,
    seededCommits: bot ? a.commitRange[0] : Rng.from(key, 'commit-count').int(a.commitRange[0], a.commitRange[1]),
    seededLastCommitMs: commitsEnd,
    addedCommitMs: [],
    contentVersion: 0,
    revision: 0,
    additions: rng.int(1, bot ? 40 : 1_800),
    deletions: rng.int(0, bot ? 40 : 900),
    changedFiles: files,
  };
}

export function commitCount(pull: PullRec): number {
  return pull.seededCommits + pull.addedCommitMs.length;
}

// ---------------------------------------------------------------------------------------
// Commits
// ---------------------------------------------------------------------------------------

export interface CommitIdentity {
  name: string;
  email: string;
  date: string;
}

export interface CommitRec {
  sha: string;
  treeSha: string;
  message: string;
  author: CommitIdentity;
  committer: CommitIdentity;
  /** The GitHub accounts the emails resolve to (null when the email is not linked). */
  authorAccount: Account | null;
  committerAccount: Account | null;
  parents: string[];
  verified: boolean;
}

const COMMIT_MESSAGES: readonly string[] = [
  'fix: handle empty page',
  'feat: add retry with jitter',
  'refactor: extract helper',
  'test: cover edge cases',
  'chore: tidy imports',
  'docs: explain configuration',
  'fix: typo',
  'Address review comments',
  'WIP',
  'Apply suggestions from code review',
  'perf: avoid extra allocation',
  'fix lint',
  'Update tests',
  'feat: wire up new endpoint',
  'fix: guard against undefined',
  'style: format',
  'build: bump node to 20',
];

function sha40(...parts: ReadonlyArray<number | string>): string {
  return Rng.from(...parts).hex(40);
}

/** The commit the branch was cut from (parent of the first commit): the base sha. */
export function baseSha(pull: PullRec): string {
  return sha40(pull.key, 'base-sha');
}

function commitSha(pull: PullRec, index: number): string {
  return sha40(pull.key, 'commit', index);
}

export function headSha(pull: PullRec): string {
  const n = commitCount(pull);
  return n > 0 ? commitSha(pull, n - 1) : baseSha(pull);
}

export function mergeCommitSha(pull: PullRec): string | null {
  if (pull.state === 'closed' && pull.mergedMs === null && Rng.from(pull.key, 'mcs').chance(0.3)) return null;
  return sha40(pull.key, 'merge-sha', pull.mergedMs === null ? pull.revision : -1);
}

/** Commit `index` (0 = oldest) of a pull request. */
export function makeCommit(pull: PullRec, index: number, directory: Directory): CommitRec {
  const rng = Rng.from(pull.key, 'commit-detail', index);
  let ms: number;
  if (index < pull.seededCommits) {
    // The first commit predates the pull request (work on the branch before opening it);
    // the others spread, in order, between its creation and its last seeded activity.
    const span = Math.max(0, pull.seededLastCommitMs - pull.createdMs);
    ms = index === 0 ? pull.createdMs - rng.int(5, 3 * 24 * 60) * MINUTE_MS : pull.createdMs + floor(((index + rng.next() * 0.9) / pull.seededCommits) * span);
  } else {
    ms = pull.addedCommitMs[index - pull.seededCommits];
  }
  const date = isoSeconds(ms);
  const person: Person = pull.bot ? pull.author : rng.chance(0.88) ? pull.author : rng.pick(directory.users);
  const unlinked = !pull.bot && rng.chance(0.05);
  const authorIdentity: CommitIdentity = {
    name: person.name,
    email: unlinked ? `${person.name.split(' ')[0].toLowerCase()}@laptop.local` : person.email,
    date,
  };
  const isMerge = !pull.bot && index > 0 && rng.chance(0.06);
  const viaWeb = pull.bot !== null || isMerge || rng.chance(0.2);
  const committer: CommitIdentity = viaWeb ? { name: WEB_FLOW.name, email: WEB_FLOW.email, date } : { ...authorIdentity };
  const parents = [index === 0 ? baseSha(pull) : commitSha(pull, index - 1)];
  if (isMerge) parents.push(sha40(pull.key, 'upstream', index));
  let message: string;
  if (pull.bot) message = index === 0 ? pullTitle({ ...pull, contentVersion: 0, edited: undefined }) : `Rebase onto ${pull.baseRef}`;
  else if (isMerge) message = `Merge branch '${pull.baseRef}' into ${pull.headRef}`;
  else message = rng.pick(COMMIT_MESSAGES) + (rng.chance(0.25) ? `\n\n${rng.pick(AREAS)}: follow-up from review.` : '');
  const authorAccount = unlinked ? null : { login: person.login, id: person.id, type: person.type };
  return {
    sha: commitSha(pull, index),
    treeSha: sha40(pull.key, 'tree', index),
    message,
    author: authorIdentity,
    committer,
    authorAccount,
    committerAccount: viaWeb ? { login: WEB_FLOW.login, id: WEB_FLOW.id, type: WEB_FLOW.type } : authorAccount,
    parents,
    verified: viaWeb,
  };
}
