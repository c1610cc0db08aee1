/** The deep import of undici's Agent (see platform/dispatcher.ts): the same class as `undici`'s. */
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}
