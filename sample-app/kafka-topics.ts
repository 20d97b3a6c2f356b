import { Kafka, logLevel } from 'kafkajs';

/**
 * Creates the sample's topics if they are missing. The relay never auto-creates topics unless told
 * to (`relay.allowAutoTopicCreation`), so an app provisions them, as it would in production.
 */
export async function ensureTopics(
  brokers: string[],
  topics: string[],
  partitions = 3,
): Promise<void> {
  const admin = new Kafka({
    clientId: 'orders-admin',
    brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: partitions,
          replicationFactor: 1,
        })),
      });
    }
  } finally {
    await admin.disconnect();
  }
}
