/** Where the app finds its servers; read when the modules are built, so tests can set them first. */
export interface AppConfig {
  mongoUri: string;
  dbName: string;
  kafkaBrokers: string[];
  /** The relay publishes an `Order` event to `${topicPrefix}Order`. */
  topicPrefix: string;
  consumerGroup: string;
}

export function appConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const mongoUri = env.MONGODB_URI;
  const brokers = env.KAFKA_BROKERS;
  if (!mongoUri || !brokers) {
    throw new Error('Set MONGODB_URI (a replica set) and KAFKA_BROKERS to run the app.');
  }
  return {
    mongoUri,
    dbName: env.APP_DB_NAME ?? 'shop',
    kafkaBrokers: brokers.split(','),
    topicPrefix: env.APP_TOPIC_PREFIX ?? '',
    consumerGroup: env.APP_CONSUMER_GROUP ?? 'order-summaries',
  };
}

export function orderTopic(config: AppConfig): string {
  return `${config.topicPrefix}Order`;
}
