import { MemoryBus } from '../../src/bus/memory-bus.js';
import { runBusContract } from './bus.contract.js';

runBusContract('MemoryBus', () => new MemoryBus());
runBusContract('MemoryBus({ encode: true })', () => new MemoryBus({ encode: true }));
