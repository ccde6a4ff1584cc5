import {
  BadGatewayException,
  BadRequestException,
  Controller,
  Get,
  Header,
  Inject,
  Query,
  ServiceUnavailableException,
  UseGuards,
} from '@nestjs/common';
import { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { FIND_UNIVERSITIES, HELLO } from '../common/messages.js';
import type { FindUniversities, University } from '../common/messages.js';
import { AuthGuard } from './auth.guard.js';
import { HELLO_SERVICE, UNIVERSITIES_SERVICE } from './clients.js';

@Controller()
export class GatewayController {
  constructor(
    @Inject(HELLO_SERVICE) private readonly hello: ClientProxy,
    @Inject(UNIVERSITIES_SERVICE) private readonly universities: ClientProxy,
  ) {}

  @Get()
  @Header('Content-Type', 'text/plain; charset=utf-8')
  greet(): Promise<string> {
    return call<string>(this.hello, HELLO, {});
  }

  @Get('universities')
  @UseGuards(AuthGuard)
  find(@Query('country') country: unknown): Promise<University[]> {
    // A repeated parameter arrives as a list.
    if (country !== undefined && typeof country !== 'string') {
      throw new BadRequestException('country must be given at most once');
    }
    return call<University[]>(this.universities, FIND_UNIVERSITIES, { country: country ?? '' } satisfies FindUniversities);
  }

  /** 200 once the gateway holds a connection to both microservices. */
  @Get('ready')
  async ready(): Promise<string> {
    try {
      await Promise.all([this.hello.connect(), this.universities.connect()]);
    } catch (err) {
      throw new ServiceUnavailableException(`microservice unreachable: ${(err as Error).message}`);
    }
    return 'ready\n';
  }
}

/** Sends a message and waits for the answer; a failed call is the upstream's fault. */
async function call<T>(client: ClientProxy, pattern: string, data: object): Promise<T> {
  try {
    return await firstValueFrom(client.send<T>(pattern, data));
  } catch (err) {
    throw new BadGatewayException(`${pattern}: ${(err as Error).message ?? String(err)}`);
  }
}
