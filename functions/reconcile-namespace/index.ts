// Pub/Sub push (HTTP, OIDC) and Eventarc (CloudEvent) entry of the namespace reconciler.
import * as functions from '@google-cloud/functions-framework';
import { registerReconciler } from '../../shared/reconcile/functions.ts';

registerReconciler(functions, 'reconcile-namespace', 'Namespace', (rt, msg) => rt.namespace(msg));
