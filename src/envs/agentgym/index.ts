/**
 * AgentGym's HTTP protocol, both ways: an `Environment` that trains on any AgentGym server
 * (`createAgentGymSpec`, registered as `agentgym`), and `turnwise env serve` (`./server/`), which
 * serves native environments to AgentGym's clients.
 */
export { AGENTGYM_TYPES, type AgentGymAdapter, type AgentGymType, agentGymAdapters } from './adapters/index.js';
export { expandIds, remoteCatalog } from './catalog.js';
export { acquireConnection, type Connection, EXTENSION_HEADER } from './connection.js';
export { AgentGymEnvironment } from './environment.js';
export { AgentGymProtocolError, AgentGymServerError, AgentGymTransportError } from './errors.js';
export { type AgentGymHealthReport, onAgentGymHealthReport, ServerMonitor } from './health.js';
export { AgentGymHttpClient } from './http-client.js';
export { InstanceLeases } from './leases.js';
export { type AgentGymSettings, agentGymSettingsSchema, parseAgentGymSettings } from './settings.js';
export { createAgentGymSpec } from './spec.js';
