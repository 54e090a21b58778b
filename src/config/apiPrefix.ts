/** Where the REST API is mounted; every surface that builds an API address takes it from here. */
export const API_PREFIX = '/api/v1';
