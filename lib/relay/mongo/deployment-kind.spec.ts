import { deploymentKindOf, deploymentWarning } from './deployment-kind';

describe('the deployment kind from hello', () => {
  it('tells mongos (msg isdbgrid), a replica set member (setName) and a standalone apart', () => {
    expect(deploymentKindOf({ msg: 'isdbgrid', isWritablePrimary: true })).toBe('mongos');
    expect(deploymentKindOf({ setName: 'rs0', lastWrite: {} })).toBe('replica-set');
    expect(deploymentKindOf({ isWritablePrimary: true })).toBe('standalone');
  });

  it('warns only through mongos, naming the cancel race and what to do', () => {
    expect(deploymentWarning('replica-set')).toBeUndefined();
    expect(deploymentWarning('standalone')).toBeUndefined();
    expect(deploymentWarning('mongos')).toMatch(/mongos.*cancel.*NTP/s);
  });
});
