// The validate-template webhook (see shared/webhooks/handlers/validate-template.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('validate-template', await webhookFunction('validate-template'));
