// The validate-organization webhook (see shared/webhooks/handlers/validate-organization.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('validate-organization', await webhookFunction('validate-organization'));
