export { createGraphSimulator, GraphSimulatorOptionsSchema, GRAPH_DEFAULT_ACCESS_TOKEN } from './simulator';
export type {
  GraphSimulator,
  GraphSimulatorOptions,
  ResolvedGraphSimulatorOptions,
  GraphSimulatorStats,
  GraphRequestLogEntry,
  ThrottleOptions,
} from './simulator';
export type { DriveType } from './data';
export { quickXorHash } from './quickxor';
