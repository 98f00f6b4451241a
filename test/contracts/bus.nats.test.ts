/**
 * The Bus contract suite against a real nats-server (JetStream on, temp store, free loopback port).
 * Nothing is skipped.
 */
import { afterAll, beforeAll } from 'vitest';
import { NatsBus } from '../../src/bus/nats-bus.js';
import { type NatsServerHandle, startNatsServer } from '../helpers/nats-server.js';
import { runBusContract } from './bus.contract.js';

let server: NatsServerHandle;
beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server?.stop();
});

runBusContract('NatsBus', () => NatsBus.connect({ servers: server.url }));
