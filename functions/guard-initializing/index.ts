// The guard-initializing webhook (see shared/webhooks/handlers/guard-initializing.ts).
import * as functions from '@google-cloud/functions-framework';
import { webhookFunction } from '../../shared/webhooks/serve.ts';

functions.http('guard-initializing', await webhookFunction('guard-initializing'));
