// Pub/Sub push (HTTP, OIDC) and Eventarc (CloudEvent) entry of record-billing.
import * as functions from '@google-cloud/functions-framework';
import { registerRecordBilling } from '../../shared/billing/function.ts';

registerRecordBilling(functions);
