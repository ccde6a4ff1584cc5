import { Controller } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { HELLO } from '../common/messages.js';

@Controller()
export class HelloController {
  @MessagePattern(HELLO)
  hello(): string {
    return 'Hello World!';
  }
}
