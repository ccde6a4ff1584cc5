import { NestFactory } from '@nestjs/core';
import { MicroserviceOptions, Transport } from '@nestjs/microservices';
import { address } from '../common/env.js';
import { UniversitiesModule } from './universities.module.js';

async function bootstrap() {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(UniversitiesModule, {
    transport: Transport.TCP,
    options: address('UNIVERSITIES_ADDR'),
  });
  app.enableShutdownHooks();
  await app.listen();
}
void bootstrap();
