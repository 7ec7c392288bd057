// Pub/Sub push (HTTP, OIDC) and Eventarc (CloudEvent) entry of the template fan-out.
import * as functions from '@google-cloud/functions-framework';
import { registerReconciler } from '../../shared/reconcile/functions.ts';

registerReconciler(functions, 'reconcile-template', 'NamespaceTemplate', (rt, msg) => rt.template(msg));
