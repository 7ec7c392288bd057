// Pub/Sub push (HTTP, OIDC) and Eventarc (CloudEvent) entry of the organization reconciler: any
// namespace event trues up the Organizations' namespace counts (see shared/org/function.ts), and
// their Enforced condition when FURNISH_ORGANIZATIONS is set.
import * as functions from '@google-cloud/functions-framework';
import { registerReconciler } from '../../shared/reconcile/functions.ts';
import { organizationHandler } from '../../shared/org/function.ts';

registerReconciler(functions, 'reconcile-organization', 'Namespace', organizationHandler(process.env));
