/** Options several commands share; this file stays free of imports so that `--help` loads nothing. */
export const CONFIG_OPTION = ['-c, --config <file>', 'configuration file (default: $TELEMATICS_AGENT_CONFIG or /etc/telematics-agent/config.json)'] as const;
