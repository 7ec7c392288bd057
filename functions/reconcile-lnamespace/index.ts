// Pub/Sub push (HTTP, OIDC) and Eventarc (CloudEvent) entry of the LNamespace reconciler.
import * as functions from '@google-cloud/functions-framework';
import { registerReconciler } from '../../shared/reconcile/functions.ts';
import { lnamespaceHandler } from '../../shared/lnamespace/function.ts';

registerReconciler(functions, 'reconcile-lnamespace', 'LNamespace', lnamespaceHandler(process.env));
