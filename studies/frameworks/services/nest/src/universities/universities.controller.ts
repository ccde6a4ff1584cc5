import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { FIND_UNIVERSITIES } from '../common/messages.js';
import type { FindUniversities, University } from '../common/messages.js';
import { UniversitiesService } from './universities.service.js';

@Controller()
export class UniversitiesController {
  constructor(private readonly universities: UniversitiesService) {}

  @MessagePattern(FIND_UNIVERSITIES)
  find(@Payload() { country }: FindUniversities): Promise<University[]> {
    return this.universities.find(country);
  }
}
