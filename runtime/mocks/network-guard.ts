import net from 'node:net';

/**
 * Proof that a mock-backed test touches no network: once a test file has built a mock, any
 * socket the process tries to open fails (every TCP and TLS client, `fetch` and `http`
 * included, connects through `net.Socket.prototype.connect`).
 *
 * Node's built-in modules are shared by the test files a jest worker runs one after another,
 * so the patch is installed once per process and switched per file: the setup file turns it
 * off at each file's start, the first mock of the file turns it on.
 */
const STATE = Symbol.for('weft.mocks.networkGuard');

interface GuardState {
  active: boolean;
  /** Connections refused since the guard was last armed, for a test to inspect. */
  refused: string[];
}

type Connect = (this: net.Socket, ...args: unknown[]) => net.Socket;

function state(): GuardState {
  const proto = net.Socket.prototype as unknown as Record<symbol, GuardState | undefined>;
  let current = proto[STATE];
  if (!current) {
    current = { active: false, refused: [] };
    proto[STATE] = current;
    const original = net.Socket.prototype.connect as unknown as Connect;
    const guard = current;
    (net.Socket.prototype as unknown as { connect: Connect }).connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
      if (guard.active) {
        const target = describeTarget(args[0], args[1]);
        guard.refused.push(target);
        throw Object.assign(new Error(`Network access during a mock-backed test (connect to ${target}): the mocks answer every provider call.`), {
          code: 'ERR_WEFT_MOCK_NETWORK',
        });
      }
      return original.apply(this, args);
    };
  }
  return current;
}

/** Called by the jest setup file at the start of every test file. */
export function resetNetworkGuard(): void {
  const s = state();
  s.active = false;
  s.refused = [];
}

/** Called when a mock is built: from now on in this test file, no socket may open. */
export function armNetworkGuard(): void {
  state().active = true;
}

/** The connections refused since the guard was armed. */
export function refusedConnections(): string[] {
  return [...state().refused];
}

function describeTarget(first: unknown, second: unknown): string {
  if (Array.isArray(first)) return describeTarget(first[0], undefined);
  if (first && typeof first === 'object') {
    const o = first as { host?: string; port?: number; path?: string };
    return o.path ?? `${o.host ?? 'localhost'}:${o.port ?? '?'}`;
  }
  if (typeof first === 'number') return `${typeof second === 'string' ? second : 'localhost'}:${first}`;
  return String(first);
}
