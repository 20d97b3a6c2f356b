import { KafkaFaultProxy } from './kafka-fault-proxy';
import { faultListenerPorts } from './servers';

/**
 * The Kafka fault proxy in front of the managed broker's fault listener: clients given
 * `proxy.broker` as their only broker stay on the proxy (the listener advertises its port).
 * One at a time per run (one port); guard the test with `describeWith(['kafka-faults'], ...)`.
 */
export async function startFaultProxy(): Promise<KafkaFaultProxy> {
  const ports = faultListenerPorts();
  if (!ports) throw new Error('no fault listener in this run (guard with kafka-faults)');
  return KafkaFaultProxy.start({ listenPort: ports.proxyPort, targetPort: ports.listenerPort });
}
