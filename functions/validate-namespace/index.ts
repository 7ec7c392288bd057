// The validate-namespace webhook (see shared/webhooks/handlers/validate-namespace.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('validate-namespace', await webhookFunction('validate-namespace'));
