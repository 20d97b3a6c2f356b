import type { Connection } from 'mongoose';
import { describeWith, suiteDatabase } from '../harness';
import { mongoTenantPortsFixture } from './support/mongo-ports';
import { tenantPortsContract } from './tenant-ports.contract';

describeWith(['mongodb'], 'TenantPorts contract: MongoTenantPorts (cluster-wide stream)', () => {
  let connection: Connection;
  suiteDatabase('contract-tenants', (opened) => (connection = opened));
  tenantPortsContract(() => Promise.resolve(mongoTenantPortsFixture(connection)));
});
