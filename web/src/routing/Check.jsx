import { useId } from 'react';

/** A labelled checkbox (its label is the click target, as a native control's). */
export function Check({ label, checked, onChange, name }) {
  const id = useId();
  return (
    <div className="choice">
      <input type="checkbox" id={id} name={name} checked={checked} onChange={(e) => onChange(e.target.checked)} />
      <label htmlFor={id}>{label}</label>
    </div>
  );
}
