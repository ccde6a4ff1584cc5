import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { address, required } from '../common/env.js';
import { HELLO_SERVICE, UNIVERSITIES_SERVICE } from './clients.js';
import { GatewayController } from './gateway.controller.js';

const secret = required('JWT_SECRET');
if (secret.length < 32) {
  throw new Error(`JWT_SECRET has ${secret.length} characters; HS256 wants a key of at least 32`);
}

@Module({
  imports: [
    ClientsModule.register([
      { name: HELLO_SERVICE, transport: Transport.TCP, options: address('HELLO_ADDR') },
      { name: UNIVERSITIES_SERVICE, transport: Transport.TCP, options: address('UNIVERSITIES_ADDR') },
    ]),
    JwtModule.register({
      secret,
      // Only HS256: a token naming another algorithm (none, or RS256 to have
      // the secret taken for a public key) is refused.
      verifyOptions: { algorithms: ['HS256'], audience: required('JWT_AUDIENCE') },
    }),
  ],
  controllers: [GatewayController],
})
export class GatewayModule {}
