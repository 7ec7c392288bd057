// The verbs, with kube-apiserver's order of work for writes:
//   decode → NamespaceLifecycle → defaults → managedFields → mutating webhooks → server-set
//   fields → validation → validating webhooks → storage (skipped for dryRun=All)
// and its answers: 201 on create, 200 otherwise, no write (and no new resourceVersion) when an
// update or patch changes nothing. One module per verb under operations/; this is their index.
export { managerOf, type ApiReply, type ApiRequest } from './operations/request.ts';
export { getObject, listItem, listObjects, selectObjects } from './operations/read.ts';
export { createObject } from './operations/create.ts';
export { updateObject } from './operations/update.ts';
export { patchObject } from './operations/patch.ts';
export { deleteCollection, deleteObject, type DeletionHooks } from './operations/delete.ts';
