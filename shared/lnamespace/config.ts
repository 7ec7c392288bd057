// The LNamespace reconciler's settings, from the environment (pure: `env` is passed in).
import { DEFAULT_LNS_SETTINGS, type LnsSettings } from './desired.ts';

const ROLE_NAME = /^[^/%]+$/;

function role(env: Record<string, string | undefined>, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!ROLE_NAME.test(raw) || raw === '.' || raw === '..') throw new Error(`${name} must name a ClusterRole, got ${JSON.stringify(raw)}`);
  return raw;
}

export function lnsSettings(env: Record<string, string | undefined>): LnsSettings {
  return {
    userRole: role(env, 'FURNISH_LNS_USER_ROLE', DEFAULT_LNS_SETTINGS.userRole),
    sudoRole: role(env, 'FURNISH_LNS_SUDO_ROLE', DEFAULT_LNS_SETTINGS.sudoRole),
  };
}
