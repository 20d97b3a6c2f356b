import { simTenantPortsFixture } from './support/sim-ports';
import { tenantPortsContract } from './tenant-ports.contract';

describe('TenantPorts contract: the simulated tenant databases (SimTenantPorts)', () => {
  tenantPortsContract(() => Promise.resolve(simTenantPortsFixture()));
});
