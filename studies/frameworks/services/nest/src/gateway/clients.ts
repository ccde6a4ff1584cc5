// Injection tokens of the TCP clients of the two microservices.
export const HELLO_SERVICE = 'HELLO_SERVICE';
export const UNIVERSITIES_SERVICE = 'UNIVERSITIES_SERVICE';
