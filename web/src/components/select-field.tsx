interface SelectFieldProps {
  label: string;
  name: string;
  value: string;
  /** Shown for the empty value: what the server does when the field is not given. */
  none: string;
  /** Values, or [value, label] pairs. */
  choices: ReadonlyArray<string | readonly [string, string]>;
  onChange: (value: string) => void;
}

/** A labelled drop-down whose empty choice means "not given". */
export function SelectField({ label, name, value, none, choices, onChange }: SelectFieldProps) {
  return (
    <label>
      {label}
      <select name={name} value={value} onInput={(event) => onChange(event.currentTarget.value)}>
        <option value="">{none}</option>
        {choices.map((choice) => {
          const [optionValue, optionLabel] = typeof choice === 'string' ? [choice, choice] : choice;
          return (
            <option key={optionValue} value={optionValue}>
              {optionLabel}
            </option>
          );
        })}
      </select>
    </label>
  );
}
