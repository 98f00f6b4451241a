/**
 * The curves' smoothing slider, as in TensorBoard: the EMA weight from 0 (the logged values) to
 * 0.99, shown next to the slider.
 */
import { h } from '../dom';

/** Largest weight the slider offers (1 would freeze the curve at its first value). */
const MAX_WEIGHT = 0.99;

/** Clamps a weight from the URL to the slider's range (anything unreadable is 0). */
export function clampWeight(weight: number): number {
  return Number.isFinite(weight) ? Math.min(MAX_WEIGHT, Math.max(0, Math.round(weight * 100) / 100)) : 0;
}

/**
 * The slider and its value; `onChange` gets each new weight.
 * @example const smoothing = new SmoothingControl(0.6, (w) => redraw(w)); root.append(smoothing.el);
 */
export class SmoothingControl {
  readonly el: HTMLElement;
  weight: number;

  constructor(initial: number, onChange: (weight: number) => void) {
    this.weight = clampWeight(initial);
    const value = h('output', { 'data-testid': 'smoothing-value' }, this.weight.toFixed(2));
    const slider = h('input', { type: 'range', min: 0, max: MAX_WEIGHT, step: 0.01, value: this.weight, 'data-testid': 'smoothing', 'aria-label': 'smoothing weight' });
    slider.addEventListener('input', () => {
      this.weight = clampWeight(Number(slider.value));
      value.textContent = this.weight.toFixed(2);
      onChange(this.weight);
    });
    this.el = h('label', { class: 'smoothing', title: "exponential moving average of each curve (TensorBoard's smoothing); the faint line is the logged values" }, 'Smoothing ', slider, ' ', value);
  }
}
