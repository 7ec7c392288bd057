// The LNamespace reconciler's settings, through the settings table (pure: `env` is passed in).
import { readSetting } from '../config/settings.ts';
import type { LnsSettings } from './desired.ts';

export function lnsSettings(env: Record<string, string | undefined>): LnsSettings {
  return { userRole: readSetting(env, 'lnsUserRole'), sudoRole: readSetting(env, 'lnsSudoRole') };
}
