import {
  INestApplication,
  INestApplicationContext,
  INestMicroservice,
  ValidationPipe,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { OutboxKafkaServer } from '../lib';
import { AppModule } from './app.module';
import type { SampleConfig } from './config';
import { ensureTopics } from './kafka-topics';
import { startTelemetry } from './observability/telemetry';

/** Topics the sample uses: one per aggregate type (the relay's default routing), after `topicPrefix`. */
export const SAMPLE_TOPICS = ['Order'];

const topicsOf = (config: SampleConfig): string[] =>
  SAMPLE_TOPICS.map((topic) => `${config.topicPrefix}${topic}`);

export interface RunningSample {
  /** The HTTP base URL, when the API part runs. */
  url?: string;
  app: INestApplication | INestMicroservice | INestApplicationContext;
  close(): Promise<void>;
}

function consumerTransport(config: SampleConfig): OutboxKafkaServer {
  return new OutboxKafkaServer({
    client: { clientId: 'order-summaries', brokers: config.kafkaBrokers },
    consumer: { groupId: config.consumerGroup },
    subscribe: { fromBeginning: true },
    topics: topicsOf(config),
  });
}

/**
 * Starts the parts of the sample named in `config.parts` in this process: the HTTP API (with the
 * consumer as a hybrid microservice when both run), or the consumer alone, or the relay alone.
 */
export async function startSample(
  config: SampleConfig,
  logger: false | undefined = undefined,
): Promise<RunningSample> {
  // Before Nest creates the outbox: its metrics find the SDK's meter provider when they register.
  startTelemetry();
  await ensureTopics(config.kafkaBrokers, topicsOf(config));
  const module = AppModule.register(config);
  const loggerOption = logger === false ? { logger: false as const } : {};

  if (config.parts.has('api')) {
    const app = await NestFactory.create(module, { ...loggerOption });
    app.useGlobalPipes(
      new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
    );
    app.enableShutdownHooks();
    if (config.parts.has('consumer')) {
      app.connectMicroservice({ strategy: consumerTransport(config) });
      await app.startAllMicroservices();
    }
    await app.listen(config.httpPort, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    return { app, url: `http://127.0.0.1:${address.port}`, close: () => app.close() };
  }
  if (config.parts.has('consumer')) {
    const app = await NestFactory.createMicroservice(module, {
      strategy: consumerTransport(config),
      ...loggerOption,
    });
    app.enableShutdownHooks();
    await app.listen();
    return { app, close: () => app.close() };
  }
  // The relay alone: no HTTP, no consumer; it starts in onApplicationBootstrap.
  const app = await NestFactory.createApplicationContext(module, { ...loggerOption });
  app.enableShutdownHooks();
  await app.init();
  return { app, close: () => app.close() };
}
