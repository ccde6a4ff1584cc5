import { Injectable, OnModuleInit } from '@nestjs/common';
import { readFile } from 'node:fs/promises';
import { required } from '../common/env.js';
import type { University } from '../common/messages.js';

/**
 * The dataset at UNIVERSITIES_FILE, read once at start (UNIVERSITIES_LOAD=startup,
 * the default: the thesis' Nest service loaded it once) or on every request
 * (per-request, as its Spring and Micro services did).
 */
@Injectable()
export class UniversitiesService implements OnModuleInit {
  private readonly path = required('UNIVERSITIES_FILE');
  private readonly mode = process.env.UNIVERSITIES_LOAD ?? 'startup';
  /** The dataset read at start; undefined when it is read per request. */
  private loaded?: University[];

  // The file is read in both modes, so that an unusable one stops the start.
  async onModuleInit(): Promise<void> {
    if (this.mode !== 'startup' && this.mode !== 'per-request') {
      throw new Error(`UNIVERSITIES_LOAD=${this.mode}: want startup or per-request`);
    }
    const all = await this.read();
    if (this.mode === 'startup') {
      this.loaded = all;
    }
  }

  /** The universities of the country, exactly as spelled; none for an unknown one. */
  async find(country: string): Promise<University[]> {
    const all = this.loaded ?? (await this.read());
    return all.filter((u) => u.country === country);
  }

  private async read(): Promise<University[]> {
    return JSON.parse(await readFile(this.path, 'utf8')) as University[];
  }
}
