// The watchdog of `npm start`'s webhook registrations (scripts/start/watchdog.ts): how long it keeps
// trying while the cluster does not answer, and the one command it prints when it gives up.
import { describe, expect, it } from '@jest/globals';
import { isLocalRegistration, removeRunCommand } from '../../../scripts/local-registrations.ts';
import { GIVE_UP_MS, sweepRetryDelay } from '../../../scripts/start/watchdog.ts';

describe('sweepRetryDelay', () => {
  it('backs off from 250 ms to at most 5 s, and gives up GIVE_UP_MS after the first sweep', () => {
    expect([1, 2, 3, 5, 6, 20].map((n) => sweepRetryDelay(n, 0))).toEqual([250, 500, 1_000, 4_000, 5_000, 5_000]);
    expect(sweepRetryDelay(40, GIVE_UP_MS - 1)).toBe(5_000);
    expect(sweepRetryDelay(40, GIVE_UP_MS)).toBeUndefined();
  });
});

describe('removeRunCommand', () => {
  it("names the registrations, then (a command of its own, which a server without them refuses alone) the policies and bindings, by this run's label or any run's", () => {
    expect(removeRunCommand('ab12')).toBe('kubectl delete mutatingwebhookconfigurations,validatingwebhookconfigurations -l furnish.dev/local-run=ab12; kubectl delete validatingadmissionpolicybindings,validatingadmissionpolicies -l furnish.dev/local-run=ab12');
    expect(removeRunCommand()).toBe('kubectl delete mutatingwebhookconfigurations,validatingwebhookconfigurations -l furnish.dev/local-run; kubectl delete validatingadmissionpolicybindings,validatingadmissionpolicies -l furnish.dev/local-run');
  });
});

describe('isLocalRegistration', () => {
  const registration = (...managers: string[]) => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: 'furnish-validate-namespace', managedFields: managers.map((manager) => ({ manager, operation: 'Apply' })) } });
  it("is npm start's while nobody else wrote it; once furnish install wrote over the same name it is the install's, never removed by a run or its watchdog", () => {
    expect(isLocalRegistration(registration('furnish-local'))).toBe(true);
    expect(isLocalRegistration(registration('kubectl-edit'))).toBe(false);
    expect(isLocalRegistration(registration('furnish-local', 'furnish-install'))).toBe(false);
  });
});
