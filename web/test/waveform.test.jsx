import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, test } from 'vitest';
import axe from 'axe-core';
import { Waveform, clickedTime, keyedTime } from '../src/screens/Waveform.jsx';

afterEach(cleanup);

/** The player as the waveform sees it: a currentTime and its timeupdate events. */
const player = () => Object.assign(new EventTarget(), { currentTime: 0 });
const peaks = Array.from({ length: 200 }, (_, n) => (n < 100 ? 0 : 0.5));

describe('where the waveform seeks', () => {
  test('a click is its share of the width, kept inside the recording', () => {
    expect(clickedTime(130, 520, 60)).toBe(15);
    expect(clickedTime(-10, 520, 60)).toBe(0);
    expect(clickedTime(600, 520, 60)).toBe(60);
    expect(clickedTime(10, 0, 60)).toBe(0); // not laid out
  });

  test('the keys move as a range input does: arrows 5 s, pages 30 s, Home and End the ends', () => {
    expect(keyedTime('ArrowRight', 10, 60)).toBe(15);
    expect(keyedTime('ArrowDown', 3, 60)).toBe(0);
    expect(keyedTime('PageUp', 40, 60)).toBe(60);
    expect([keyedTime('Home', 40, 60), keyedTime('End', 40, 60)]).toEqual([0, 60]);
    expect(keyedTime('a', 40, 60)).toBeNull();
  });
});

describe('the waveform', () => {
  test('200 bars as decoration, silence still a line, and one labelled slider; no axe violation', async () => {
    const { container } = render(<main><Waveform peaks={peaks} duration={60} audio={player()} label="Seek in the recording" /></main>);
    const slider = screen.getByRole('slider', { name: 'Seek in the recording' });
    const bars = container.querySelectorAll('svg rect');
    expect(bars.length).toBe(200);
    expect(container.querySelector('svg').getAttribute('aria-hidden')).toBe('true');
    expect([bars[0].getAttribute('height'), bars[150].getAttribute('height')]).toEqual(['1', '50']);
    expect([slider.getAttribute('aria-valuemax'), slider.getAttribute('aria-valuetext')]).toEqual(['60', '0.0 s of 60.0 s']);
    const results = await axe.run(container, { rules: { region: { enabled: false } } });
    expect(results.violations).toEqual([]);
  });

  test('a click seeks the player to that point; the played part follows the player', () => {
    const audio = player();
    const { container } = render(<Waveform peaks={peaks} duration={60} audio={audio} label="Seek" />);
    const slider = screen.getByRole('slider', { name: 'Seek' });
    slider.getBoundingClientRect = () => ({ left: 100, width: 400, top: 0, height: 48, right: 500, bottom: 48 });
    fireEvent.click(slider, { clientX: 200 });
    expect(audio.currentTime).toBe(15);
    expect(slider.getAttribute('aria-valuenow')).toBe('15');
    expect(container.querySelectorAll('rect.played').length).toBe(50);

    audio.currentTime = 30; // playing on
    fireEvent(audio, new Event('timeupdate'));
    expect(slider.getAttribute('aria-valuetext')).toBe('30.0 s of 60.0 s');
    expect(container.querySelectorAll('rect.played').length).toBe(100);
  });

  test('the keyboard seeks too', () => {
    const audio = player();
    render(<Waveform peaks={peaks} duration={60} audio={audio} label="Seek" />);
    const slider = screen.getByRole('slider', { name: 'Seek' });
    expect(slider.tabIndex).toBe(0);
    fireEvent.keyDown(slider, { key: 'ArrowRight' });
    fireEvent.keyDown(slider, { key: 'ArrowRight' });
    expect(audio.currentTime).toBe(10);
    fireEvent.keyDown(slider, { key: 'End' });
    expect(audio.currentTime).toBe(60);
    fireEvent.keyDown(slider, { key: 'Home' });
    expect(audio.currentTime).toBe(0);
  });
});
