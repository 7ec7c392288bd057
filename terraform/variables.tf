variable "project_id" {
  description = "GCP project that hosts the functions, the topic and the billing dataset."
  type        = string
}

variable "region" {
  description = "Region of the functions and the bundle bucket."
  type        = string
  default     = "europe-west1"
}

variable "name_prefix" {
  description = "Prefix of the names of buckets, topics, subscriptions, service accounts and secrets. Functions keep their bare names (<functions URL>/<name> is the contract with infra/webhooks), so one Furnish per project and region."
  type        = string
  default     = "furnish"
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,19}$", var.name_prefix))
    error_message = "name_prefix: lowercase letters, digits and '-', starting with a letter, at most 20 characters."
  }
}

variable "runtime" {
  description = "Cloud Functions runtime; matches the Node.js pinned in package.json."
  type        = string
  default     = "nodejs24"
  validation {
    condition     = can(regex("^nodejs(2[2-9]|[3-9][0-9])$", var.runtime))
    error_message = "runtime: nodejs22 or later (client-node 2, jose 6 and bigquery 9 need Node 22+)."
  }
}

variable "bundle_dir" {
  description = "Where `npm run build` wrote one folder per function."
  type        = string
  default     = "../dist"
}

variable "gke_clusters" {
  description = "GKE clusters Furnish serves, by cluster id (a DNS label; the webhook token's sub and the path credential's /c/<id>/): each cluster's name, location (region or zone) and project (default: project_id). The functions reach them with their own Google service accounts, no Kubernetes credential anywhere: Terraform reads each cluster's endpoint and CA (data google_container_cluster), grants the accounts roles/container.clusterViewer in the cluster's project so that GKE authenticates their tokens, and output install_vars names them (FURNISH_RECONCILER_USER, FURNISH_WEBHOOK_USER) for `furnish install` to bind in RBAC. dns_endpoint (default true): the DNS-based control-plane endpoint (publicly trusted certificate, no network path into the VPC; turn it on with external traffic allowed); false: the cluster's IP endpoint with its CA, which Cloud Functions reach only if it is public."
  type = map(object({
    name         = string
    location     = string
    project      = optional(string)
    dns_endpoint = optional(bool, true)
  }))
  default = {}
  validation {
    condition     = alltrue([for id in keys(var.gke_clusters) : can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", id))])
    error_message = "gke_clusters: each keyed by its cluster id, a DNS label (lowercase letters, digits and '-')."
  }
}

variable "cluster_secrets" {
  description = "Clusters other than GKE (EKS, AKS, self-managed), by cluster id (a DNS label): the id of the Secret Manager secret that will hold the kubeconfig the reconcilers use in that cluster (a token of ServiceAccount furnish-system/furnish-reconciler, or the cloud's own credential plugin; docs/operate/install.md; Terraform creates the secret, its versions are added out of band), and optionally the API server the webhooks ask SubjectAccessReviews and templates of (server URL and CA PEM; the token is var.cluster_webhook_tokens). A cluster id is in gke_clusters or here, not both."
  type = map(object({
    kubeconfig_secret_id = string
    api = optional(object({
      server = string
      ca_pem = string
    }))
  }))
  default = {}
  validation {
    condition     = alltrue([for id in keys(var.cluster_secrets) : can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", id))])
    error_message = "cluster_secrets: each keyed by its cluster id, a DNS label (lowercase letters, digits and '-')."
  }
}

variable "cluster_webhook_tokens" {
  description = "Per cluster id of cluster_secrets (GKE clusters need none): a token of ServiceAccount furnish-system/furnish-webhook (created by `furnish install`), for the webhooks' SubjectAccessReviews and template reads. Absent on the first apply (the cluster side does not exist yet): the webhooks then answer every check that needs the API with a 503 'retry'. Held in Terraform state, like the generated credentials."
  type        = map(string)
  default     = {}
  sensitive   = true
}

variable "reconciler_env" {
  description = "Extra reconciler settings (FURNISH_SYSTEM_NAMESPACES, FURNISH_KUBE_QPS, FURNISH_FANOUT_RATE, ...: see README, Settings). The topic variables are not among them: the reconcilers always get the topics created here, the same the relay gets (output install_vars)."
  type        = map(string)
  default     = {}
  # A topic given here would be dropped for the one created here: refused, never silently replaced.
  validation {
    condition     = length([for name in keys(var.reconciler_env) : name if startswith(name, "FURNISH_TOPIC_")]) == 0
    error_message = "reconciler_env: FURNISH_TOPIC_* are set from the topics this module creates, the same the relay gets (output install_vars); remove them."
  }
  validation {
    condition     = contains(keys(var.reconciler_env), "FURNISH_DELIVERY_TIMEOUT_SECONDS") == false
    error_message = "reconciler_env: FURNISH_DELIVERY_TIMEOUT_SECONDS follows variable reconciler.timeout, the functions' timeout and the subscriptions' ack deadline; set that instead."
  }
  validation {
    condition     = contains(keys(var.reconciler_env), "FURNISH_ORGANIZATIONS") == false
    error_message = "reconciler_env: FURNISH_ORGANIZATIONS follows variable organizations, which the webhooks read too; set that instead."
  }
}

variable "organizations" {
  description = "Whether the organization rules apply (docs/guide/organizations.md) in every cluster: the webhooks' clusters[].organizations.enabled and the reconcilers' FURNISH_ORGANIZATIONS, from this one value so the two never part. Off, each Organization carries the condition Enforced=False (RulesOff)."
  type        = bool
  default     = false
}

variable "webhook" {
  description = "Sizing of the admission functions, on the user's critical path. min_instances: instances kept warm, so that a fail-closed webhook meets no cold start within its 3-5 s timeout (`npm run bench -- startup` measures one; docs/operate/install.md states what an idle instance costs); 0 saves that cost and lets the first call after a quiet spell wait for a start. concurrency: requests one instance takes at once; 32 reviews of kube-apiserver's largest size (3 MiB), in the costliest shapes, peak under 75 % of 256Mi (`npm run bench -- webhooks-memory`; README, Performance). Measure again before raising it or lowering memory."
  type = object({
    min_instances = number
    max_instances = number
    memory        = string
    timeout       = number
    concurrency   = optional(number, 32)
  })
  default = { min_instances = 1, max_instances = 20, memory = "256Mi", timeout = 10, concurrency = 32 }
}

variable "reconciler" {
  description = "Sizing of the Pub/Sub-triggered reconcilers."
  type = object({
    max_instances = number
    memory        = string
    timeout       = number
    concurrency   = number
  })
  default = { max_instances = 10, memory = "512Mi", timeout = 300, concurrency = 8 }
  # The subscriptions' ack deadline is this timeout (triggers.tf), and Pub/Sub takes 10 to 600 s.
  validation {
    condition     = var.reconciler.timeout >= 10 && var.reconciler.timeout <= 600
    error_message = "reconciler.timeout: between 10 and 600 seconds, the ack deadlines Pub/Sub accepts (the push subscriptions wait that long for each delivery)."
  }
  # A delivery sends no Kubernetes call in its last call timeout and 2 s (FURNISH_DELIVERY_TIMEOUT_SECONDS,
  # set from this timeout): the reconcilers refuse to start with less than one call's time left.
  validation {
    condition     = var.reconciler.timeout * 1000 >= 2 * tonumber(lookup(var.reconciler_env, "FURNISH_KUBE_TIMEOUT_MS", "10000")) + 2000
    error_message = "reconciler.timeout: at least twice a Kubernetes call's timeout (FURNISH_KUBE_TIMEOUT_MS in reconciler_env, 10000 ms by default) and 2 s more, since a delivery sends no call in its last call timeout and 2 s (FURNISH_DELIVERY_TIMEOUT_SECONDS, docs/reference/settings.md)."
  }
}

variable "billing" {
  description = "BigQuery dataset and table of the billing rows."
  type = object({
    dataset  = string
    table    = string
    location = string
  })
  default = { dataset = "furnish", table = "namespace_events", location = "EU" }
}

variable "relay_workload_identity_pools" {
  description = "Workload identity pools whose furnish-system/furnish-relay ServiceAccount may act as the relay's Google service account: \"PROJECT.svc.id.goog\" for GKE clusters of PROJECT. Empty: bind it yourself (or give the relay a key)."
  type        = list(string)
  default     = []
}

variable "billing_readers" {
  description = "Members (user:, group:, serviceAccount:) who may read the billing dataset and run `furnish billing report` against it."
  type        = list(string)
  default     = []
}
