// The JSON API client (/api/v1/...). A bearer token, when the server wants one, is
// asked for once and kept in sessionStorage.

export class ApiError extends Error {
  // `body`: the error's JSON body (e.g. the "matches" of an ambiguous run id prefix).
  constructor(status, message, body = null) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

const kTokenKey = 'fleetmark.token';

export async function getJson(path, params = {}) {
  const url = new URL(`/api/v1/${path}`, window.location.origin);
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, value);
  }
  const headers = {Accept: 'application/json'};
  const token = sessionStorage.getItem(kTokenKey);
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(url, {headers});
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    body = null;
  }
  if (!response.ok) {
    const message = (body && body.error) || `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, message, body);
  }
  return body;
}

export function setToken(token) {
  if (token) sessionStorage.setItem(kTokenKey, token);
  else sessionStorage.removeItem(kTokenKey);
}
