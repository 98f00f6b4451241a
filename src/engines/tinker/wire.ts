/**
 * The Tinker training API's JSON wire, as zod schemas and the types inferred from them: the
 * request and result of every route `turnwise tinker serve` answers and the remote engine calls,
 * every answer a future can give, the error bodies, and converters between the wire's `Datum` /
 * `TensorData` / sampling shapes and the typed arrays of `src/engines/engine.ts`.
 *
 * Pure data: no server code, no Node-specific import, so a client and a server share it.
 * Every route lives under {@link TINKER_API_PREFIX}; {@link TINKER_ROUTES} lists them.
 */

export { wireDtype, tensorData, encodedTextChunk, imageChunk, otherChunk, modelInputChunk, modelInput, datum, forwardBackwardOutput, LOSS_FN_INPUT_NAMES, tensorOf, denseValues, modelInputTokens, modelInputOf, datumToWire, datumFromWire, forwardOutputToWire, forwardOutputFromWire } from './wire/tensors.js';
export type { WireDtype, TensorData, EncodedTextChunk, ModelInputChunk, ModelInput, Datum, ForwardBackwardOutput } from './wire/tensors.js';
export { KNOWN_LOSS_NAMES, lossFnName, LOSS_CONFIG_KEYS, loraConfig, createModelRequest, createModelAccepted, createModelResult, getInfoRequest, getInfoResponse, forwardBackwardInput, forwardRequest, forwardBackwardRequest, adamParams, optimStepRequest, optimStepResult, saveWeightsRequest, saveWeightsResult, loadWeightsRequest, loadWeightsResult, saveWeightsForSamplerRequest, saveWeightsForSamplerResult, weightsInfoRequest, weightsInfoResponse, unloadModelRequest, unloadModelResult, adamParamsToWire, adamParamsFromWire, gradNormOf } from './wire/training.js';
export type { LossFnName, LoraConfig, CreateModelRequest, CreateModelAccepted, CreateModelResult, GetInfoRequest, GetInfoResponse, ForwardBackwardInput, ForwardRequest, ForwardBackwardRequest, WireAdamParams, OptimStepRequest, OptimStepResult, SaveWeightsRequest, SaveWeightsResult, LoadWeightsRequest, LoadWeightsResult, SaveWeightsForSamplerRequest, SaveWeightsForSamplerResult, WeightsInfoResponse, UnloadModelRequest, UnloadModelResult } from './wire/training.js';
export { samplingParams, sampleRequest, stopReason, sampledSequence, sampleResponse, createSamplingSessionRequest, createSamplingSessionResponse, getSamplerResponse, sampleRequestToWire, sampleRequestFromWire, sampleResultToWire, sampleResultFromWire } from './wire/sampling.js';
export type { SamplingParams, SampleRequest, SampledSequence, SampleResponse, CreateSamplingSessionRequest, CreateSamplingSessionResponse, GetSamplerResponse, SampleSource, PromptLogprobsLayout } from './wire/sampling.js';
export { healthResponse, supportedModel, serverCapabilities, clientConfigRequest, clientConfigResponse, createSessionRequest, createSessionResponse, sessionHeartbeatRequest, sessionHeartbeatResponse, untypedFuture, retrieveFutureRequest, queueState, tryAgainResponse, requestErrorCategory, requestFailedResponse, validationIssue, errorBody, classifyFutureAnswer, errorMessageOf, checkpoint, cursor, checkpointsListResponse, checkpointArchiveUrlResponse, trainingRun, trainingRunsResponse, parseTinkerPath, tinkerPath } from './wire/service.js';
export type { HealthResponse, ServerCapabilities, ClientConfigResponse, CreateSessionRequest, CreateSessionResponse, UntypedFuture, RetrieveFutureRequest, TryAgainResponse, RequestErrorCategory, RequestFailedResponse, ValidationIssue, ErrorBody, FutureAnswer, Checkpoint, Cursor, CheckpointsListResponse, TrainingRun, TrainingRunsResponse, TinkerPath } from './wire/service.js';

/** The path every route of the API lives under. */
export const TINKER_API_PREFIX = '/api/v1';

/**
 * Every route, relative to {@link TINKER_API_PREFIX}. Queued routes answer a future to poll with
 * `retrieve_future`; the others answer at once. `{id}`/`{name}` are path parameters.
 */
export const TINKER_ROUTES = {
  healthz: { method: 'GET', path: 'healthz', queued: false },
  getServerCapabilities: { method: 'GET', path: 'get_server_capabilities', queued: false },
  clientConfig: { method: 'POST', path: 'client/config', queued: false },
  createSession: { method: 'POST', path: 'create_session', queued: false },
  sessionHeartbeat: { method: 'POST', path: 'session_heartbeat', queued: false },
  createSamplingSession: { method: 'POST', path: 'create_sampling_session', queued: false },
  createModel: { method: 'POST', path: 'create_model', queued: true },
  getInfo: { method: 'POST', path: 'get_info', queued: false },
  unloadModel: { method: 'POST', path: 'unload_model', queued: true },
  forward: { method: 'POST', path: 'forward', queued: true },
  forwardBackward: { method: 'POST', path: 'forward_backward', queued: true },
  optimStep: { method: 'POST', path: 'optim_step', queued: true },
  saveWeights: { method: 'POST', path: 'save_weights', queued: true },
  loadWeights: { method: 'POST', path: 'load_weights', queued: true },
  saveWeightsForSampler: { method: 'POST', path: 'save_weights_for_sampler', queued: true },
  weightsInfo: { method: 'POST', path: 'weights_info', queued: false },
  asample: { method: 'POST', path: 'asample', queued: true },
  retrieveFuture: { method: 'POST', path: 'retrieve_future', queued: false },
  getSampler: { method: 'GET', path: 'samplers/{id}', queued: false },
  trainingRuns: { method: 'GET', path: 'training_runs', queued: false },
  trainingRun: { method: 'GET', path: 'training_runs/{id}', queued: false },
  checkpoints: { method: 'GET', path: 'training_runs/{id}/checkpoints', queued: false },
  checkpointArchive: { method: 'GET', path: 'training_runs/{id}/checkpoints/{name}/archive', queued: false },
  checkpointDownload: { method: 'GET', path: 'training_runs/{id}/checkpoints/{name}/download', queued: false },
} as const;

/** Content type of the protobuf bodies the official SDK sends (`forward_backward`) and asks for (`retrieve_future`). */
export const PROTOBUF_CONTENT_TYPE = 'application/x-protobuf';
