/**
 * The `Available actions: [...]` line that ends an observation (the same shape BabyAI uses), so a
 * policy reading text sees what it may do.
 */

/**
 * @example formatAvailableActions(['up', 'down']) // 'Available actions: ["up", "down"]'
 */
export function formatAvailableActions(actions: readonly string[]): string {
  return `Available actions: [${actions.map((a) => `"${a}"`).join(', ')}]`;
}
