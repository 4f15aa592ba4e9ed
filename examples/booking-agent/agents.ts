/**
 * The booking app's agents module: what its handlers, its CDK app and `logbook dev` load.
 *
 * - The fake airline and payment service keep their state in BOOKING_STATE_FILE when it is set
 *   (the local stack runs workers as processes it kills: the services must outlive them, as real
 *   ones do), in memory otherwise.
 * - The model: scripted by default; LOGBOOK_MODEL=bedrock:<id> or openai:<model> for a built-in
 *   provider; BOOKING_AI_SDK_URL (+ BOOKING_AI_SDK_MODEL) for any OpenAI-compatible server through
 *   the AI SDK provider package, as any AI SDK provider would be plugged in (aiSdkModel).
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { aiSdkModel, defineAgents, selectedModel, type Agents, type ModelClient } from 'logbook';
import { BOOKING_MODEL_ID, bookingAgent, bookingModel } from './booking-agent.js';
import { JsonFileStore, MemoryStore } from './state-store.js';
import { TravelServices, emptyTravelState } from './travel-services.js';
import { travellerDirectory } from './travellers.js';

export function createBookingAgents(env: Record<string, string | undefined> = process.env): Agents {
  const store = env.BOOKING_STATE_FILE ? new JsonFileStore(env.BOOKING_STATE_FILE, emptyTravelState()) : new MemoryStore(emptyTravelState());
  const services = new TravelServices(store);
  const models: Record<string, () => ModelClient> = { [BOOKING_MODEL_ID]: () => bookingModel() };
  let model: { id: string; price: { inputPerMTokUsd: number; outputPerMTokUsd: number } } | undefined;
  if (env.BOOKING_AI_SDK_URL) {
    const client = aiSdkModel(createOpenAICompatible({ name: 'booking', baseURL: env.BOOKING_AI_SDK_URL }).chatModel(env.BOOKING_AI_SDK_MODEL ?? 'qwen2.5:7b'));
    // An aisdk: model has no list price: the agent pins the one you pay.
    model = { id: client.id, price: { inputPerMTokUsd: 0.2, outputPerMTokUsd: 0.6 } };
    models[client.id] = () => client;
  } else if (env.LOGBOOK_MODEL && !env.LOGBOOK_MODEL.startsWith('scripted')) {
    const real = selectedModel(env);
    model = { id: real.modelId, price: real.price };
  }
  const directory = travellerDirectory();
  return defineAgents({
    agents: [bookingAgent(services, model ? { model } : {})],
    models,
    // Called once per run start, before the instructions function; never on resume.
    appContext: () => directory,
  });
}

/** Built once per cold start, from that process's environment. */
export default () => createBookingAgents();
