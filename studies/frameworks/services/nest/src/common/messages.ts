// The message patterns the gateway sends over the TCP transport and the
// microservices answer, and what they carry.

export const HELLO = 'hello';
export const FIND_UNIVERSITIES = 'universities.find';

export interface FindUniversities {
  country: string;
}

/** One record of the dataset, with its field names. */
export interface University {
  web_pages: string[];
  name: string;
  alpha_two_code: string;
  'state-province': string | null;
  domains: string[];
  country: string;
}
