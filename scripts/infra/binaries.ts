import { spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, chmod, cp, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InfraError, tail } from './errors';
import { tryAcquirePidLock } from './pid-lock';
import { childProcessEnv, defaultBinaryCacheDir, executableSearchPath } from './infra-env';

export type BinaryName = 'temporal' | 'temporal-server' | 'ferretdb';

export interface ResolveBinaryOptions {
  /** A path the user chose (WEFT_TEMPORAL_BIN / WEFT_TEMPORAL_SERVER_BIN / WEFT_FERRETDB_BIN); it wins over everything else. */
  explicitPath?: string;
  /** Per-user cache of built binaries; defaults to `${XDG_CACHE_HOME:-~/.cache}/weft/bin`. */
  cacheDir?: string;
  log?: (msg: string) => void;
}

interface BinarySpec {
  /** Pinned tag; Weft's flags and behaviour are checked against exactly this release. */
  version: string;
  /** Env var callers read the explicit path from; named in error messages only. */
  explicitEnv: string;
  /** Extracts a comparable description from `--version` output, or undefined if unusable. */
  describeVersion(output: string): { ok: boolean; found: string };
  build(ctx: BuildContext): Promise<void>;
}

interface BuildContext {
  workDir: string;
  /** Where the build must leave the finished executable. */
  outFile: string;
  output: OutputSink;
}

/** FerretDB v1.24.2 plus FERRETDB_PATCHES; the suffix makes caches of other builds rebuild. */
const FERRETDB_BUILD_VERSION = 'v1.24.2-weft.6';

interface SourcePatch {
  /** Why, in one line (errors name it). */
  name: string;
  file: string;
  from: string;
  to: string;
}

/**
 * The one helper both `$in` patches share, added as a file of FerretDB's `types` package
 * (the query and the delete live in packages that cannot see each other's helpers).
 */
const FERRETDB_ID_IN_HELPER = {
  file: path.join('internal', 'types', 'weft_id_in.go'),
  source: `package types

// WeftIDInList returns the values of a filter that is exactly {_id: {$in: [...]}} with 1 to
// 10,000 strings or ObjectIDs, or nil for any other filter. Such a filter matches exactly
// the documents with those ids, so it can be answered through the _id index alone.
func WeftIDInList(filter *Document) []any {
\tif filter.Len() != 1 {
\t\treturn nil
\t}

\tcond, ok := filter.Map()["_id"].(*Document)
\tif !ok || cond.Len() != 1 {
\t\treturn nil
\t}

\tarr, ok := cond.Map()["$in"].(*Array)
\tif !ok || arr.Len() == 0 || arr.Len() > 10_000 {
\t\treturn nil
\t}

\tids := make([]any, 0, arr.Len())

\tfor i := 0; i < arr.Len(); i++ {
\t\tswitch el := arr.s[i].(type) {
\t\tcase string, ObjectID:
\t\t\tids = append(ids, el)
\t\tdefault:
\t\t\treturn nil
\t\t}
\t}

\treturn ids
}
`,
};

/**
 * Small fixes of FerretDB 1.24's SQLite backend, applied to the source before the build.
 * Each was measured at 100,000 documents; the records engine depends on all of them.
 */
const FERRETDB_PATCHES: SourcePatch[] = [
  {
    // An upstream bug: the `_id` index is created on the expression `_ferretdb_sjson->"_id"`,
    // but queries, updates and deletes by `_id` use `_ferretdb_sjson->'$._id'`. SQLite
    // matches indexes by expression text, so every lookup by `_id` read the whole collection
    // (245 ms at 30,000 documents); spelled like the index it is a SEARCH, about 1 ms.
    name: '_id lookups use the _id index',
    file: path.join('internal', 'backends', 'sqlite', 'metadata', 'metadata.go'),
    from: `IDColumn = DefaultColumn + "->'$._id'"`,
    to: 'IDColumn = DefaultColumn + `->"_id"`',
  },
  {
    // An upstream bug: `update` closes each statement's query with a `defer` inside the
    // statement loop, so every statement keeps a pooled SQLite connection until the whole
    // command ends. A command of more than ~100 statements then waits forever for a
    // connection (the pool's size). Closing each query when its statement ends fixes it.
    name: "update releases each statement's connection",
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\t\tcloser := iterator.NewMultiCloser()\n\t\tdefer closer.Close()\n\n\t\tcloser.Add(res.Iter)\n\n\t\titer := common.FilterIterator(res.Iter, closer, u.Filter)\n\n\t\tif !u.Multi {\n\t\t\titer = common.LimitIterator(iter, closer, 1)\n\t\t}\n\n\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n',
    to: '\t\tcloser := iterator.NewMultiCloser()\n\t\tcloser.Add(res.Iter)\n\n\t\titer := common.FilterIterator(res.Iter, closer, u.Filter)\n\n\t\tif !u.Multi {\n\t\t\titer = common.LimitIterator(iter, closer, 1)\n\t\t}\n\n\t\tresult, err := common.UpdateDocument(ctx, c, "update", iter, &u)\n\t\tcloser.Close()\n',
  },
  {
    // MongoDB's single-document atomicity, which FerretDB 1.24 lacks: an update reads the
    // document, applies the operators in Go and writes the whole document back, so two
    // concurrent updates of one document could lose one's change (seen as a missing `$max`
    // field of a shared tally document). See handler_weft_write_lock.go.
    name: 'updates of one collection are atomic (update)',
    file: path.join('internal', 'handler', 'msg_update.go'),
    from: '\tmatched, modified, upserted, err := h.updateDocument(connCtx, params)\n',
    to: '\tunlock := weftLockCollection(params.DB, params.Collection)\n\tmatched, modified, upserted, err := h.updateDocument(connCtx, params)\n\tunlock()\n',
  },
  {
    name: 'updates of one collection are atomic (findAndModify)',
    file: path.join('internal', 'handler', 'msg_findandmodify.go'),
    from: '\tres, err := h.findAndModifyDocument(connCtx, params)\n',
    to: '\tunlock := weftLockCollection(params.DB, params.Collection)\n\tres, err := h.findAndModifyDocument(connCtx, params)\n\tunlock()\n',
  },
  {
    // A pushdown FerretDB lacks: `{_id: {$in: [...]}}` read the whole collection and
    // filtered it in Go (25-30 s at 100,000 documents). Pushed down as `IN (...)` it reads
    // through the `_id` index: 1,000 ids in about 0.3 s. The handler still filters every
    // returned document, so the pushdown only narrows what is read.
    name: '_id $in reads through the _id index',
    file: path.join('internal', 'backends', 'sqlite', 'collection.go'),
    from: '\t\tv, _ := params.Filter.Get("_id")\n\t\tswitch v.(type) {\n\t\tcase string, types.ObjectID:\n\t\t\twhereClause = fmt.Sprintf(` WHERE %s = ?`, metadata.IDColumn)\n\t\t\targs = []any{string(must.NotFail(sjson.MarshalSingleValue(v)))}\n\t\t}\n\t}\n\n\tq += whereClause',
    to: [
      '\t\tv, _ := params.Filter.Get("_id")',
      '\t\tswitch v := v.(type) {',
      '\t\tcase string, types.ObjectID:',
      '\t\t\twhereClause = fmt.Sprintf(` WHERE %s = ?`, metadata.IDColumn)',
      '\t\t\targs = []any{string(must.NotFail(sjson.MarshalSingleValue(v)))}',
      '\t\tcase *types.Document:',
      '\t\t\tif ids := types.WeftIDInList(params.Filter); ids != nil {',
      '\t\t\t\twhereClause = fmt.Sprintf(` WHERE %s IN (?%s)`, metadata.IDColumn, strings.Repeat(", ?", len(ids)-1))',
      '\t\t\t\tfor _, id := range ids {',
      '\t\t\t\t\targs = append(args, string(must.NotFail(sjson.MarshalSingleValue(id))))',
      '\t\t\t\t}',
      '\t\t\t}',
      '\t\t}',
      '\t}',
      '',
      '\tq += whereClause',
    ].join('\n'),
  },
  {
    // A shortcut FerretDB lacks: a delete by `{_id: {$in: [...]}}` read and parsed every
    // matching document only to learn the ids it was given (0.35 ms per document). The
    // documents matching that filter are exactly the rows with those ids, so they are
    // deleted by id directly: 1,000 in about 30 ms.
    name: 'deletes by _id $in skip reading the documents',
    file: path.join('internal', 'handler', 'msg_delete.go'),
    from: 'func (h *Handler) execDelete(ctx context.Context, c backends.Collection, p *common.Delete) (int32, error) {\n',
    to: [
      'func (h *Handler) execDelete(ctx context.Context, c backends.Collection, p *common.Delete) (int32, error) {',
      '\tif ids := types.WeftIDInList(p.Filter); ids != nil && !p.Limited && !h.DisablePushdown {',
      '\t\td, err := c.DeleteAll(ctx, &backends.DeleteAllParams{IDs: ids})',
      '\t\tif err != nil {',
      '\t\t\treturn 0, lazyerrors.Error(err)',
      '\t\t}',
      '',
      '\t\treturn d.Deleted, nil',
      '\t}',
      '',
    ].join('\n'),
  },
  // A pushdown FerretDB lacks, in the seven edits below (plus FERRETDB_ADDED_FILES): a find by
  // an `_id` range over strings, `{_id: {$gt|$gte: a, $lt|$lte: b}}`, sorted by `_id`, with a
  // limit, read and sorted the whole collection in Go; now SQLite reads it through the `_id`
  // index in `_id` order with the limit: O(limit), not O(collection). The index orders the
  // JSON text of `_id`, which differs from string order around escaped characters and ' ', '!';
  // the backend checks that the rows are the right ones (probing the few index places where a
  // misplaced string could hide) and otherwise reads the whole collection as before. The
  // handler still filters, sorts and limits, so results are FerretDB's.
  {
    name: '_id ranges read through the _id index (query parameter)',
    file: path.join('internal', 'backends', 'collection.go'),
    from: '\tOnlyRecordIDs bool\n\tComment       string\n}\n',
    to: "\tOnlyRecordIDs bool\n\tComment       string\n\n\t// WeftIDRange, if set, is the filter's _id range over strings (see types.WeftIDRange).\n\tWeftIDRange *types.WeftIDRange\n}\n",
  },
  {
    name: '_id ranges read through the _id index (explain parameter)',
    file: path.join('internal', 'backends', 'collection.go'),
    from: 'type ExplainParams struct {\n\tFilter *types.Document\n\tSort   *types.Document\n\tLimit  int64\n}\n',
    to: 'type ExplainParams struct {\n\tFilter *types.Document\n\tSort   *types.Document\n\tLimit  int64\n\n\tWeftIDRange *types.WeftIDRange\n}\n',
  },
  {
    name: '_id ranges read through the _id index (find)',
    file: path.join('internal', 'handler', 'msg_find.go'),
    from: '\th.L.DebugContext(ctx, fmt.Sprintf("Converted %+v for %+v to %+v.", params, cInfo, qp))\n',
    to: [
      '\t// An _id range over strings is read through the _id index, with the limit when sorted by',
      '\t// _id and nothing is skipped; the handler still filters, sorts and limits what comes back.',
      '\tif !h.DisablePushdown && !cInfo.Capped() {',
      '\t\tif r := types.WeftIDRangeFor(params.Filter, params.Sort); r != nil {',
      '\t\t\tqp.WeftIDRange = r',
      '\t\t\tif r.Sorted && params.Skip == 0 {',
      '\t\t\t\tqp.Limit = params.Limit',
      '\t\t\t}',
      '\t\t}',
      '\t}',
      '',
      '\th.L.DebugContext(ctx, fmt.Sprintf("Converted %+v for %+v to %+v.", params, cInfo, qp))',
      '',
    ].join('\n'),
  },
  {
    // Explain reports the same pushdown (filterPushdown, sortPushdown, limitPushdown and
    // SQLite's plan), which is how the tests see that the range is read through the index.
    name: '_id ranges read through the _id index (explain)',
    file: path.join('internal', 'handler', 'msg_explain.go'),
    from: '\tres, err := coll.Explain(connCtx, qp)\n',
    to: [
      '\t// As in find: an _id range over strings is read through the _id index.',
      '\tif !h.DisablePushdown && !params.Aggregate && !cInfo.Capped() {',
      '\t\tif r := types.WeftIDRangeFor(params.Filter, params.Sort); r != nil {',
      '\t\t\tqp.WeftIDRange = r',
      '\t\t\tif r.Sorted && params.Skip == 0 {',
      '\t\t\t\tqp.Limit = params.Limit',
      '\t\t\t}',
      '\t\t}',
      '\t}',
      '',
      '\tres, err := coll.Explain(connCtx, qp)',
      '',
    ].join('\n'),
  },
  {
    // A delete by such a range reads only the range too (in any order: nothing is cut off).
    name: '_id ranges read through the _id index (delete)',
    file: path.join('internal', 'handler', 'msg_delete.go'),
    from: '\tvar qp backends.QueryParams\n\tif !h.DisablePushdown {\n\t\tqp.Filter = p.Filter\n\t}\n',
    to: [
      '\tvar qp backends.QueryParams',
      '\tif !h.DisablePushdown {',
      '\t\tqp.Filter = p.Filter',
      '',
      '\t\tif !p.Limited {',
      '\t\t\tqp.WeftIDRange = types.WeftIDRangeFor(p.Filter, nil)',
      '\t\t}',
      '\t}',
      '',
    ].join('\n'),
  },
  {
    name: '_id ranges read through the _id index (SQLite query)',
    file: path.join('internal', 'backends', 'sqlite', 'collection.go'),
    from: '\tq := prepareSelectClause(meta.TableName, params.Comment, meta.Capped(), params.OnlyRecordIDs)\n',
    to: [
      '\tif params.WeftIDRange != nil && !meta.Capped() && !params.OnlyRecordIDs {',
      '\t\tres, ok, err := weftQueryIDRange(ctx, db, meta.TableName, params)',
      '\t\tif err != nil {',
      '\t\t\treturn nil, lazyerrors.Error(err)',
      '\t\t}',
      '',
      '\t\tif ok {',
      '\t\t\treturn res, nil',
      '\t\t}',
      '',
      '\t\t// Not provably right through the index: read everything, as without the patch.',
      '\t\tfallback := *params',
      '\t\tfallback.WeftIDRange, fallback.Limit = nil, 0',
      '\t\tparams = &fallback',
      '\t}',
      '',
      '\tq := prepareSelectClause(meta.TableName, params.Comment, meta.Capped(), params.OnlyRecordIDs)',
      '',
    ].join('\n'),
  },
  {
    name: '_id ranges read through the _id index (SQLite explain)',
    file: path.join('internal', 'backends', 'sqlite', 'collection.go'),
    from: '\torderByClause := prepareOrderByClause(params.Sort)\n\tsortPushdown := orderByClause != ""\n',
    to: [
      '\torderByClause := prepareOrderByClause(params.Sort)',
      '\tsortPushdown := orderByClause != ""',
      '',
      '\tif r := params.WeftIDRange; r != nil && !meta.Capped() {',
      '\t\tfilterPushdown, sortPushdown = true, r.Sorted',
      '\t\twhereClause, args = weftIDRangeClauses(r, 0)',
      '\t\torderByClause = ""',
      '\t}',
      '',
    ].join('\n'),
  },
];

/**
 * Go files added to FerretDB, kept beside this one (Go source full of backquotes reads badly
 * inside a template string): the `_id` range patch's parsing of the filter, shared by the
 * handler's find and explain, and the SQLite backend's range read with its checks; and the
 * per-collection lock that makes updates atomic.
 */
const FERRETDB_ADDED_FILES = [
  { file: path.join('internal', 'types', 'weft_id_range.go'), from: path.join(__dirname, 'ferretdb-patches', 'types_weft_id_range.go') },
  { file: path.join('internal', 'backends', 'sqlite', 'weft_id_range.go'), from: path.join(__dirname, 'ferretdb-patches', 'sqlite_weft_id_range.go') },
  { file: path.join('internal', 'handler', 'weft_write_lock.go'), from: path.join(__dirname, 'ferretdb-patches', 'handler_weft_write_lock.go') },
];

async function applyFerretDbPatches(srcDir: string): Promise<void> {
  await writeFile(path.join(srcDir, FERRETDB_ID_IN_HELPER.file), FERRETDB_ID_IN_HELPER.source);
  for (const helper of FERRETDB_ADDED_FILES) await writeFile(path.join(srcDir, helper.file), await readFile(helper.from, 'utf8'));
  for (const patch of FERRETDB_PATCHES) {
    const file = path.join(srcDir, patch.file);
    const source = await readFile(file, 'utf8');
    if (!source.includes(patch.from)) throw new Error(`FerretDB source changed: ${patch.file} lacks the code the patch "${patch.name}" replaces`);
    await writeFile(file, source.replace(patch.from, patch.to));
  }
}

export const BINARY_SPECS: Record<BinaryName, BinarySpec> = {
  temporal: {
    version: 'v1.5.1',
    explicitEnv: 'WEFT_TEMPORAL_BIN',
    describeVersion(output) {
      // Release builds print "temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)". A plain
      // `go install` leaves the CLI's version variable at "0.0.0-DEV", so for those the
      // embedded server version (1.29.1 ships only in CLI 1.5.x) identifies the build.
      const cli = /temporal version (\S+)/.exec(output)?.[1];
      const server = /Server (\d+\.\d+\.\d+)/.exec(output)?.[1];
      if (!cli) return { ok: false, found: firstLine(output) || 'no version output' };
      const ok = cli === '1.5.1' || (cli.startsWith('0.0.0-DEV') && server === '1.29.1');
      return { ok, found: `${cli}${server ? ` (server ${server})` : ''}` };
    },
    async build({ workDir, outFile, output }) {
      // `go install pkg@v1.5.1` works here (later tags carry a replace directive). The ldflag
      // stamps the real version so `temporal --version` says 1.5.1 instead of 0.0.0-DEV.
      const gobin = path.join(workDir, 'bin');
      await mkdir(gobin, { recursive: true });
      await runGo(['install', '-ldflags', '-X github.com/temporalio/cli/temporalcli.Version=1.5.1', 'github.com/temporalio/cli/cmd/temporal@v1.5.1'], {
        cwd: workDir,
        env: { GOBIN: gobin },
        output,
      });
      await rename(path.join(gobin, 'temporal'), outFile);
    },
  },
  // The plain Temporal server (no dev-server defaults), for the tests that need a server
  // configured as a production one is: TLS with client certificates on the frontend, and
  // authorization (scripts/infra/temporal-server.ts). The same release the CLI above embeds,
  // so the build reuses the modules (and much of the build cache) of the CLI build.
  'temporal-server': {
    version: 'v1.29.1',
    explicitEnv: 'WEFT_TEMPORAL_SERVER_BIN',
    describeVersion(output) {
      // `server --version` prints "temporal version 1.29.1" (the server's own version constant,
      // so a plain `go install` reports it too). The CLI prints "temporal version 1.5.1 (Server
      // 1.29.1, ...)": its version is not the server's, so it is not mistaken for this one.
      const version = /temporal version (\S+)/.exec(output)?.[1];
      if (!version) return { ok: false, found: firstLine(output) || 'no version output' };
      return { ok: version === '1.29.1' && !/\(Server /.test(output), found: version };
    },
    async build({ workDir, outFile, output }) {
      // `go install go.temporal.io/server/cmd/server@v1.29.1` works: the module has no
      // replace directive. It installs a binary named `server`.
      const gobin = path.join(workDir, 'bin');
      await mkdir(gobin, { recursive: true });
      await runGo(['install', 'go.temporal.io/server/cmd/server@v1.29.1'], { cwd: workDir, env: { GOBIN: gobin }, output });
      await rename(path.join(gobin, 'server'), outFile);
    },
  },
  ferretdb: {
    version: FERRETDB_BUILD_VERSION,
    explicitEnv: 'WEFT_FERRETDB_BIN',
    describeVersion(output) {
      const version = /^version: (\S+)/m.exec(output)?.[1];
      if (!version) return { ok: false, found: firstLine(output) || 'no version output' };
      // Only our patched build (see FERRETDB_PATCHES) is accepted: stock v1.24.2 reads
      // every record by a full table scan and hangs on big update commands.
      return { ok: version === FERRETDB_BUILD_VERSION, found: version };
    },
    async build({ workDir, outFile, output }) {
      // `go install .../ferretdb@v1.24.2` fails on this module proxy (403 on the @v/list
      // deprecation lookup), so the module is fetched through a throwaway module instead.
      const modDir = path.join(workDir, 'mod');
      await mkdir(modDir, { recursive: true });
      const goEnv = { GOFLAGS: '-mod=mod' };
      await runGo(['mod', 'init', 'weft-ferretdb-build'], { cwd: modDir, env: goEnv, output });
      await runGo(['get', 'github.com/FerretDB/FerretDB@v1.24.2'], { cwd: modDir, env: goEnv, output });
      const sourceDir = (await runGo(['list', '-m', '-f', '{{.Dir}}', 'github.com/FerretDB/FerretDB'], { cwd: modDir, env: goEnv, output })).trim();
      // FerretDB panics at start-up unless build/version/version.txt exists (its release
      // tooling generates it; the module zip lacks it). Embedded files cannot be added to the
      // read-only module cache, so build from a writable copy of the module with the file added.
      const srcCopy = path.join(workDir, 'src');
      await cp(sourceDir, srcCopy, { recursive: true });
      await makeWritable(srcCopy);
      await writeFile(path.join(srcCopy, 'build', 'version', 'version.txt'), `${FERRETDB_BUILD_VERSION}\n`);
      await applyFerretDbPatches(srcCopy);
      await runGo(['build', '-buildvcs=false', '-o', outFile, './cmd/ferretdb'], { cwd: srcCopy, env: goEnv, output });
    },
  },
};

/**
 * Finds a usable server binary: explicit path → PATH → per-user cache → build with Go.
 * A binary of the wrong version on PATH or in the cache is skipped (the cached one rebuilt).
 */
export async function resolveBinary(name: BinaryName, opts: ResolveBinaryOptions = {}): Promise<string> {
  const spec = BINARY_SPECS[name];
  const log = opts.log ?? (() => {});
  const cacheDir = path.resolve(opts.cacheDir ?? defaultBinaryCacheDir());
  const tried: string[] = [];

  if (opts.explicitPath) {
    const explicit = path.resolve(opts.explicitPath);
    if (!(await isExecutable(explicit))) {
      throw new InfraError('infra_binary_unavailable', `${name}: the explicit path ${explicit} (${spec.explicitEnv}) does not exist or is not executable.`, {
        tried: [`${spec.explicitEnv}=${explicit}: missing`],
      });
    }
    // An explicit choice is honoured even at another version (it is the escape hatch), but say so.
    const check = await checkVersion(explicit, spec);
    if (!check.ok) log(`warning: ${explicit} reports ${name} ${check.found}; Weft is tested with ${spec.version}`);
    return explicit;
  }

  for (const candidate of await findOnPath(name)) {
    const check = await checkVersion(candidate, spec);
    if (check.ok) return candidate;
    tried.push(`PATH ${candidate}: version ${check.found}, need ${spec.version} (skipped)`);
    log(`skipping ${candidate}: version ${check.found}, need ${spec.version}`);
  }
  if (!tried.length) tried.push(`PATH: no ${name}`);

  const cached = path.join(cacheDir, name);
  const cachedCheck = await checkCached(cached, spec);
  if (cachedCheck.ok) return cached;
  tried.push(`cache ${cached}: ${cachedCheck.reason}`);

  return buildIntoCache(name, spec, cacheDir, tried, log);
}

async function checkCached(file: string, spec: BinarySpec): Promise<{ ok: boolean; reason: string }> {
  if (!(await isExecutable(file))) return { ok: false, reason: 'not present' };
  const check = await checkVersion(file, spec);
  return check.ok ? { ok: true, reason: '' } : { ok: false, reason: `version ${check.found}, need ${spec.version}` };
}

async function buildIntoCache(name: BinaryName, spec: BinarySpec, cacheDir: string, tried: string[], log: (msg: string) => void): Promise<string> {
  const target = path.join(cacheDir, name);
  const goVersion = await run('go', ['version'], { timeoutMs: 30_000 }).catch((err: Error) => ({ code: -1, output: err.message }));
  if (goVersion.code !== 0) {
    throw new InfraError(
      'infra_binary_unavailable',
      `${name} ${spec.version} not found and cannot be built: the Go toolchain (go) is not on PATH.\nTried:\n  ${tried.join('\n  ')}\n` +
        `Install Go ≥ 1.25, or set ${spec.explicitEnv} to an existing ${name} ${spec.version} binary.`,
      { tried },
    );
  }

  await mkdir(cacheDir, { recursive: true });
  const release = await acquireBuildLock(path.join(cacheDir, `.${name}.build.lock`), name, log);
  try {
    // Another run may have finished the build while this one waited for the lock.
    if ((await checkCached(target, spec)).ok) return target;

    log(`building ${name} ${spec.version} with ${goVersion.output.trim()} into ${cacheDir} (the first build takes minutes)`);
    const started = Date.now();
    // The work dir lives inside the cache dir so the final rename stays on one file system.
    const workDir = await mkdtemp(path.join(cacheDir, `.build-${name}-`));
    const output = new OutputSink();
    try {
      const outFile = path.join(workDir, `${name}.new`);
      try {
        await spec.build({ workDir, outFile, output });
      } catch (err) {
        throw new InfraError(
          'infra_binary_unavailable',
          `${name} ${spec.version} not found and the Go build failed (${(err as Error).message}).\nTried:\n  ${tried.join('\n  ')}\n` +
            `Build output (tail):\n${tail(output.text())}`,
          { tried },
        );
      }
      const check = await checkVersion(outFile, spec);
      if (!check.ok) {
        throw new InfraError(
          'infra_binary_unavailable',
          `Built ${name} reports version ${check.found}, expected ${spec.version}.\nTried:\n  ${tried.join('\n  ')}`,
          { tried },
        );
      }
      await chmod(outFile, 0o755);
      // Atomic: a concurrent reader sees either no binary or the complete one.
      await rename(outFile, target);
      log(`built ${name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      return target;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  } finally {
    await release();
  }
}

/**
 * Waits for the build lock (a pid lock file, see pid-lock.ts): one build of a binary at a
 * time per cache, however many test runs and starts want it at once.
 */
export async function acquireBuildLock(lockFile: string, name: string, log: (msg: string) => void): Promise<() => Promise<void>> {
  const deadline = Date.now() + 30 * 60_000;
  let announced = false;
  for (;;) {
    const attempt = await tryAcquirePidLock(lockFile, (stale) => log(`removing stale build lock ${lockFile} (pid ${stale.pid} is gone)`));
    if (attempt.acquired) return attempt.release;
    if (!announced) {
      log(`waiting for another ${name} build to finish (lock ${lockFile}${attempt.holder ? `, pid ${attempt.holder.pid}` : ''})`);
      announced = true;
    }
    if (Date.now() > deadline) {
      throw new InfraError('infra_binary_unavailable', `Timed out waiting for the ${name} build lock ${lockFile}; remove it if no build is running.`);
    }
    await sleep(1000);
  }
}

async function checkVersion(file: string, spec: BinarySpec): Promise<{ ok: boolean; found: string }> {
  try {
    const result = await run(file, ['--version'], { timeoutMs: 30_000 });
    return spec.describeVersion(result.output);
  } catch (err) {
    return { ok: false, found: `unusable (${(err as Error).message})` };
  }
}

async function findOnPath(name: string): Promise<string[]> {
  const found: string[] = [];
  for (const dir of executableSearchPath()) {
    const candidate = path.join(dir, name);
    if (!found.includes(candidate) && (await isExecutable(candidate))) found.push(candidate);
  }
  return found;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function makeWritable(dir: string): Promise<void> {
  // The Go module cache is read-only; copies keep that mode and cannot be edited or removed.
  await run('chmod', ['-R', 'u+w', dir], { timeoutMs: 60_000 }).then((r) => {
    if (r.code !== 0) throw new Error(`chmod failed: ${r.output}`);
  });
}

/** Collects build output so a failure can show its tail. */
class OutputSink {
  private chunks: string[] = [];
  private size = 0;
  push(text: string): void {
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > 256_000 && this.chunks.length > 1) this.size -= this.chunks.shift()!.length;
  }
  text(): string {
    return this.chunks.join('');
  }
}

async function runGo(args: string[], opts: { cwd: string; env: Record<string, string>; output: OutputSink }): Promise<string> {
  opts.output.push(`$ go ${args.join(' ')}\n`);
  const result = await run('go', args, { cwd: opts.cwd, env: opts.env, timeoutMs: 60 * 60_000, output: opts.output });
  if (result.code !== 0) throw new Error(`go ${args[0]} exited with ${result.code}`);
  return result.stdout;
}

interface RunResult {
  code: number | null;
  stdout: string;
  output: string;
}

function run(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs: number; output?: OutputSink }): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    // Children inherit the environment (PATH, GOPATH, GOPROXY...) plus the given overrides.
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: childProcessEnv(opts.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let output = '';
    const onData = (isStdout: boolean) => (chunk: Buffer) => {
      const text = chunk.toString();
      if (isStdout) stdout += text;
      output += text;
      if (output.length > 512_000) output = output.slice(-256_000);
      opts.output?.push(text);
    };
    child.stdout.on('data', onData(true));
    child.stderr.on('data', onData(false));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, output });
    });
  });
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
