/**
 * The status socket's requests (line-delimited JSON, one request line per connection):
 *
 *   client -> daemon  {"get":"status"}       daemon -> client  {"status":{...StatusSnapshot}}  then closes
 *   client -> daemon  {"subscribe":"fixes"}  handed to the fix publisher (src/socket/fix-protocol.ts)
 *   anything else                            daemon -> client  {"error":{"code":"...","message":"..."}}
 *
 * `socat - UNIX-CONNECT:/run/telematics-agent/status.sock <<< '{"get":"status"}'` works by hand.
 */
export const GET_STATUS = { get: 'status' } as const;
/** Longest request line accepted; requests are a few dozen bytes. */
export const MAX_REQUEST_LINE = 4096;
