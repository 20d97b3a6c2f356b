/** The sample's configuration, from environment variables (see sample-app/README section in the main README). */
export type SamplePart = 'api' | 'relay' | 'consumer';

export interface SampleConfig {
  mongoUri: string;
  kafkaBrokers: string[];
  httpPort: number;
  /** Which parts this process runs. Default all three: HTTP API, relay and consumer. */
  parts: Set<SamplePart>;
  /** Kafka consumer group of the order-summaries consumer. */
  consumerGroup: string;
  /** Prefix of the topic names (`${topicPrefix}Order`), default none. */
  topicPrefix: string;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): SampleConfig {
  const mongoUri = env.MONGODB_URI;
  if (!mongoUri)
    throw new Error(
      'Set MONGODB_URI to a MongoDB replica set (e.g. mongodb://127.0.0.1:27017/orders?replicaSet=rs0)',
    );
  const kafkaBrokers = (env.KAFKA_BROKERS ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);
  if (kafkaBrokers.length === 0) throw new Error('Set KAFKA_BROKERS (e.g. 127.0.0.1:9092)');
  const parts = new Set((env.SAMPLE_PARTS ?? 'api,relay,consumer').split(',').map((p) => p.trim()));
  for (const part of parts) {
    if (!['api', 'relay', 'consumer'].includes(part)) {
      throw new Error(`SAMPLE_PARTS: unknown part "${part}" (use api, relay, consumer)`);
    }
  }
  return {
    mongoUri,
    kafkaBrokers,
    httpPort: Number(env.PORT ?? 3000),
    parts: parts as Set<SamplePart>,
    consumerGroup: env.SAMPLE_CONSUMER_GROUP ?? 'order-summaries',
    topicPrefix: env.SAMPLE_TOPIC_PREFIX ?? '',
  };
}
